"""reward_instruct prepare: everything pre-trained before the few-step generators are, for every
verdict seed (``ctx.seeds``, one after another in this process: batching the seeds' networks as
one model saves nothing here, benchmarks/reward_instruct/seeds.py).

Per seed, on sklearn's 8x8 digits (shipped offline, scaled to [-1, 1]), split by the seed into the
reward model's digits (``n_reward``) and the judge's (the rest):
- the reward model, an MLP classifier; the reward is log C_r(class | image);
- the judge, a wider MLP trained under input noise on the other digits: the held-out reward and,
  through its penultimate features, the Fréchet distance (the quality bound);
- the teacher, a class-conditional DDPM (MLP epsilon-net) on all digits.
Every draw of a seed comes from its own generators (stages.common.seeds.rng / torch_generator;
the weight init from ``torch.manual_seed(seed)``), so a seed's models do not depend on the others.
Outputs: data/reward_instruct/models/seed_<s>/ (reward.pt, judge.pt, teacher.pt, split.npz), the
first verdict seed's teacher as an MLflow pyfunc (data/reward_instruct/teacher_model, registered)
and reports/reward_instruct/prepare.json (per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .data import example_input, load_digits_scaled
from .params import PARAMS
from .paths import MODELS, PREPARE_METRICS, TEACHER_MODEL, seed_dir

# named random streams of a seed (stages.common.seeds): the split, the classifiers, the teacher
RNG_SPLIT, RNG_CLASSIFIERS, RNG_TEACHER = 0, 1, 2


def pretrain(p, seed: int, progress=None) -> dict:
    """One seed's reward model, judge and teacher DDPM (``p``: the prepare params). Returns
    {reward, judge, teacher, abar, split: (reward idx, judge idx), losses, metrics, cpu_s}."""
    import time

    import numpy as np
    import torch

    from stages.common.seeds import rng, torch_generator

    from . import diffusion as D

    torch.manual_seed(seed)                      # weight init (the only draw from torch's global RNG)
    xs, ys = load_digits_scaled()
    perm = rng(seed, RNG_SPLIT).permutation(len(xs))
    tr, te = perm[:p.n_reward], perm[p.n_reward:]
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    t0 = time.process_time()
    gen = torch_generator(seed, RNG_CLASSIFIERS)
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
    losses = D.train_ddpm(teacher, x, y, abar, p.teacher_steps, p.batch, p.lr, torch_generator(seed, RNG_TEACHER),
                          progress=progress)
    teacher_s = time.process_time() - t0
    metrics = {"n_reward": int(len(tr)), "n_judge": int(len(te)),
               "reward_model_accuracy_on_judge_digits": acc_reward, "judge_accuracy_on_reward_digits": acc_judge,
               "teacher_loss_first": losses[0], "teacher_loss_last100_mean": float(np.mean(losses[-100:]))}
    return {"reward": reward, "judge": judge, "teacher": teacher, "abar": abar, "split": (tr, te), "losses": losses,
            "metrics": metrics, "cpu_s": {"classifiers": clf_s, "teacher": teacher_s}}


def save_models(folder, p, out: dict, teacher_cfg: dict) -> None:
    """One seed's pre-trained models into ``folder`` (reward.pt, judge.pt, teacher.pt, split.npz)."""
    from pathlib import Path

    import numpy as np
    import torch

    from . import diffusion as D

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"hidden": p.reward_hidden, "state": out["reward"].state_dict()}, folder / "reward.pt")
    torch.save({"hidden": p.judge_hidden, "state": out["judge"].state_dict()}, folder / "judge.pt")
    D.save_weights(out["teacher"], folder / "teacher.pt", teacher_cfg)
    np.savez(folder / "split.npz", reward=out["split"][0], judge=out["split"][1])


def main() -> None:
    with stage("reward_instruct", "prepare", PARAMS) as ctx:
        from pathlib import Path

        from stages.common.device import limit_threads

        limit_threads()        # one torch/BLAS thread: tiny MLPs gain nothing from two
        from tqdm import tqdm

        from stages.common.io import atomic_dir, write_json
        from stages.common.mlmodel import save_pyfunc
        from stages.common.seeds import per_seed_metrics, run_seeds

        p = ctx.params.prepare
        cfg = {"hidden": p.hidden, "layers": p.layers, "T": p.T, "beta_max": p.beta_max,
               "sample_steps": ctx.params.train.teacher_eval_steps}
        with atomic_dir(ctx.path(MODELS)) as tmp:
            def one(seed: int) -> dict:
                with tqdm(total=p.teacher_steps, desc=f"teacher DDPM, seed {seed}", mininterval=2) as bar:
                    out = pretrain(p, seed, progress=bar)
                save_models(Path(tmp) / seed_dir(seed), p, out, cfg)
                ctx.run.log_curve(f"seed{seed}.teacher.loss", out["losses"][::10], steps=range(0, len(out["losses"]), 10))
                ctx.run.log_metrics({f"seed{seed}.classifiers_cpu_s": out["cpu_s"]["classifiers"],
                                     f"seed{seed}.teacher_cpu_s": out["cpu_s"]["teacher"]})
                m = out["metrics"]
                print(f"  seed {seed}: reward model acc {m['reward_model_accuracy_on_judge_digits']:.3f}, judge acc "
                      f"{m['judge_accuracy_on_reward_digits']:.3f} (on each other's digits); teacher loss "
                      f"{m['teacher_loss_first']:.3f} -> {m['teacher_loss_last100_mean']:.3f}; CPU s: classifiers "
                      f"{out['cpu_s']['classifiers']:.1f}, teacher {out['cpu_s']['teacher']:.1f}", flush=True)
                return m

            results = run_seeds(ctx.seeds, one, what="seed (pre-training)")
        first = ctx.seeds[0]
        save_pyfunc(ctx.path(TEACHER_MODEL), Path(__file__).with_name("pyfunc.py"),
                    {"weights": ctx.path(MODELS) / seed_dir(first) / "teacher.pt"},
                    input_example=example_input(ctx.path(MODELS) / seed_dir(first), first))
        ctx.run.log_model(ctx.path(TEACHER_MODEL), "teacher", params={**cfg, "seed": first})
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(results))


if __name__ == "__main__":
    main()
