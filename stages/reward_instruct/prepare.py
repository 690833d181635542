"""reward_instruct prepare: everything pre-trained before the few-step generators are.

On sklearn's 8x8 digits (shipped offline, scaled to [-1, 1]), split by the seed into the reward
model's digits (``n_reward``) and the judge's (the rest):
- the reward model, an MLP classifier; the reward is log C_r(class | image);
- the judge, a wider MLP trained under input noise on the other digits: the held-out reward and,
  through its penultimate features, the Fréchet distance (the quality bound);
- the teacher, a class-conditional DDPM (MLP epsilon-net) on all digits.
Outputs: data/reward_instruct/models (reward.pt, judge.pt, teacher.pt, split.npz), the teacher as an
MLflow pyfunc (data/reward_instruct/teacher_model, registered) and reports/reward_instruct/prepare.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .data import load_digits_scaled
from .params import PARAMS
from .paths import MODELS, PREPARE_METRICS, TEACHER_MODEL


def main() -> None:
    with stage("reward_instruct", "prepare", PARAMS) as ctx:
        import time
        from pathlib import Path

        from stages.common.device import limit_threads

        limit_threads()        # one torch/BLAS thread: tiny MLPs gain nothing from two
        import numpy as np
        import torch
        from tqdm import tqdm

        from stages.common.io import atomic_dir, write_json
        from stages.common.mlmodel import save_pyfunc

        from . import diffusion as D

        p = ctx.params.prepare
        torch.manual_seed(ctx.seed)      # torch is imported after the stage seeded: seed its global RNG (weight init)
        xs, ys = load_digits_scaled()
        perm = np.random.default_rng([ctx.seed, 0]).permutation(len(xs))
        tr, te = perm[:p.n_reward], perm[p.n_reward:]
        x, y = torch.from_numpy(xs), torch.from_numpy(ys)
        gen = torch.Generator().manual_seed(ctx.seed)
        t0 = time.process_time()
        reward = D.make_classifier(p.reward_hidden, 64)
        D.train_classifier(reward, x[tr], y[tr], p.clf_steps, 128, p.lr, 0.0, gen)
        judge = D.make_classifier(p.judge_hidden, 64)
        D.train_classifier(judge, x[te], y[te], p.judge_steps, 128, p.lr, p.judge_noise, gen)
        with torch.no_grad():
            acc_reward = float((reward(x[te]).argmax(1) == y[te]).float().mean())
            acc_judge = float((judge(x[tr]).argmax(1) == y[tr]).float().mean())
        clf_s = time.process_time() - t0
        abar = D.schedule(p.T, p.beta_max)
        teacher = D.make_epsnet(p.hidden, p.layers)
        t0 = time.process_time()
        with tqdm(total=p.teacher_steps, desc="teacher DDPM", mininterval=2) as bar:
            losses = D.train_ddpm(teacher, x, y, abar, p.teacher_steps, p.batch, p.lr, gen, progress=bar)
        teacher_s = time.process_time() - t0
        ctx.run.log_curve("teacher.loss", losses[::10], steps=range(0, len(losses), 10))
        cfg = {"hidden": p.hidden, "layers": p.layers, "T": p.T, "beta_max": p.beta_max,
               "sample_steps": ctx.params.train.teacher_eval_steps}
        with atomic_dir(ctx.path(MODELS)) as tmp:
            torch.save({"hidden": p.reward_hidden, "state": reward.state_dict()}, Path(tmp) / "reward.pt")
            torch.save({"hidden": p.judge_hidden, "state": judge.state_dict()}, Path(tmp) / "judge.pt")
            D.save_weights(teacher, Path(tmp) / "teacher.pt", cfg)
            np.savez(Path(tmp) / "split.npz", reward=tr, judge=te)
        save_pyfunc(ctx.path(TEACHER_MODEL), Path(__file__).with_name("pyfunc.py"),
                    {"weights": ctx.path(MODELS) / "teacher.pt"})
        ctx.run.log_model(ctx.path(TEACHER_MODEL), "teacher", params=cfg)
        write_json(ctx.path(PREPARE_METRICS), {
            "n_reward": int(len(tr)), "n_judge": int(len(te)),
            "reward_model_accuracy_on_judge_digits": acc_reward, "judge_accuracy_on_reward_digits": acc_judge,
            "teacher_loss_first": losses[0], "teacher_loss_last100_mean": float(np.mean(losses[-100:]))})
        ctx.run.log_metrics({"classifiers_cpu_s": clf_s, "teacher_cpu_s": teacher_s,
                             "teacher_steps_per_cpu_s": p.teacher_steps / max(teacher_s, 1e-9)})
        print(f"  reward model acc {acc_reward:.3f}, judge acc {acc_judge:.3f} (on each other's digits); "
              f"teacher loss {losses[0]:.3f} -> {np.mean(losses[-100:]):.3f}; CPU s: classifiers {clf_s:.1f}, "
              f"teacher {teacher_s:.1f}", flush=True)


if __name__ == "__main__":
    main()
