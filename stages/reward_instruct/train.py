"""reward_instruct train: the few-step generators, each a copy of the teacher sampled in
``gen_steps`` DDIM steps, judged along their training (the points of the reward-quality curves).

Runs (names as in the reports):
- ``r0``: R0, the reward alone plus weight regularisation (lambda) and random eta, gentle schedule;
- ``distill``: distillation + reward (MSE to the teacher's many-step DDIM output from the same
  noise, plus the same reward term), the same schedule and number of sampling steps;
- ``unregularised``: the reward-hacking control, the reward alone with no regulariser and no
  random eta, at the aggressive schedule;
- ``r0_aggressive``: R0 at the aggressive schedule.
The teacher is also sampled in ``teacher_eval_steps`` and in ``gen_steps`` steps (the references).
Every sample set uses the same noise and classes (``per_class`` per digit).
Outputs: data/reward_instruct/samples.npz, the R0 generator as an MLflow pyfunc
(data/reward_instruct/r0_model, registered) and reports/reward_instruct/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .data import RUNS
from .diffusion import load_classifier
from .params import PARAMS
from .paths import GENERATOR_MODEL, MODELS, SAMPLES, TRAIN_METRICS


def main() -> None:
    with stage("reward_instruct", "train", PARAMS) as ctx:
        import copy
        import time
        from pathlib import Path

        from stages.common.device import limit_threads

        limit_threads()        # one torch/BLAS thread: tiny MLPs gain nothing from two
        import numpy as np
        import torch
        from tqdm import tqdm

        from stages.common.io import atomic_path, write_json
        from stages.common.mlmodel import save_pyfunc

        from . import diffusion as D

        p = ctx.params.train
        torch.manual_seed(ctx.seed)      # torch is imported after the stage seeded: seed its global RNG (weight init)
        teacher, abar, cfg = D.load_epsnet(ctx.path(MODELS) / "teacher.pt")
        reward = load_classifier(ctx.path(MODELS) / "reward.pt")
        ge = torch.Generator().manual_seed(10_000 + ctx.seed)
        ce = torch.arange(D.N_CLASSES).repeat_interleave(p.per_class)
        ze = torch.randn(len(ce), D.DIM, generator=ge)

        def draw(net, steps):
            with torch.no_grad():
                return D.sample(net, abar, ce, steps, None, eta=0.0, z=ze.clone()).numpy()

        out = {"classes": ce.numpy(), "teacher_ref": draw(teacher, p.teacher_eval_steps),
               "teacher_few": draw(teacher, p.gen_steps)}
        gen = torch.Generator().manual_seed(ctx.seed)
        t0 = time.process_time()
        pc = torch.randint(0, D.N_CLASSES, (p.pool,), generator=gen)
        pz = torch.randn(p.pool, D.DIM, generator=gen)
        with torch.no_grad():
            pool = {"c": pc, "z": pz, "target": D.sample(teacher, abar, pc, p.distill_steps, None, z=pz.clone())}
        pool_s = time.process_time() - t0
        specs = {"r0": ("r0", p.gentle, p.gentle.lam, True), "distill": ("distill", p.gentle, 0.0, False),
                 "unregularised": ("r0", p.aggressive, 0.0, False),
                 "r0_aggressive": ("r0", p.aggressive, p.aggressive.lam, True)}
        summary, cpu, nets = {}, {"pool_cpu_s": pool_s}, {}
        with tqdm(total=sum(s.steps for _, s, _, _ in specs.values()), desc="generators", mininterval=2) as bar:
            for i, name in enumerate(RUNS):
                method, sch, lam, random_eta = specs[name]
                net = copy.deepcopy(teacher)
                net.train()
                checkpoints = list(range(0, sch.steps + 1, sch.every))
                snaps = []
                t0 = time.process_time()
                hist = D.train_generator(
                    net, abar, reward, method=method, steps=sch.steps, batch=p.batch, lr=sch.lr, lam=lam,
                    random_eta=random_eta, gen_steps=p.gen_steps, gen=torch.Generator().manual_seed(ctx.seed * 100 + i),
                    checkpoints=checkpoints, on_checkpoint=lambda s: snaps.append(draw(net, p.gen_steps)),
                    pool=pool, w_reward=p.w_reward, progress=bar)
                cpu[f"{name}_cpu_s"] = time.process_time() - t0
                out[f"{name}_steps"], out[f"{name}_x"] = np.array(checkpoints), np.stack(snaps)
                ctx.run.log_curve(f"{name}.reward_logp", [h["reward_logp"] for h in hist])
                ctx.run.log_curve(f"{name}.dtheta2", [h["dtheta2"] for h in hist])
                summary[name] = {"steps": sch.steps, "lr": sch.lr, "lam": lam, "random_eta": random_eta,
                                 "final_train_reward_logp": hist[-1]["reward_logp"], "final_dtheta2": hist[-1]["dtheta2"]}
                nets[name] = net
        with atomic_path(ctx.path(SAMPLES), suffix=".npz") as tmp:
            np.savez(tmp, **out)
        weights = ctx.path(GENERATOR_MODEL + ".pt")
        D.save_weights(nets["r0"], weights, {**cfg, "sample_steps": p.gen_steps})
        save_pyfunc(ctx.path(GENERATOR_MODEL), Path(__file__).with_name("pyfunc.py"), {"weights": weights})
        weights.unlink()
        ctx.run.log_model(ctx.path(GENERATOR_MODEL), "r0_generator", params={**cfg, "sample_steps": p.gen_steps,
                                                                            **p.gentle.model_dump()})
        write_json(ctx.path(TRAIN_METRICS), summary)
        # timings vary run to run: MLflow metrics, not the (deterministic) metrics file
        ctx.run.log_metrics({**cpu, **{f"{n}_steps_per_cpu_s": specs[n][1].steps / max(cpu[f"{n}_cpu_s"], 1e-9)
                                       for n in RUNS}})
        print("  " + "; ".join(f"{n}: train reward {summary[n]['final_train_reward_logp']:.3f}, "
                               f"|dtheta|^2 {summary[n]['final_dtheta2']:.3g}, {cpu[n + '_cpu_s']:.1f} s CPU"
                               for n in RUNS), flush=True)


if __name__ == "__main__":
    main()
