"""reward_instruct train: the few-step generators, each a copy of the teacher sampled in
``gen_steps`` DDIM steps, judged along their training (the points of the reward-quality curves),
for every verdict seed (``ctx.seeds``, one after another in this process), each from its own
seed's pre-trained models.

Runs (names as in the reports):
- ``r0``: R0, the reward alone plus weight regularisation (lambda) and random eta, gentle schedule;
- ``distill``: distillation + reward (MSE to the teacher's many-step DDIM output from the same
  noise, plus the same reward term), the same schedule and number of sampling steps;
- ``distill_regularised``: R0 with the distillation loss put back (distillation + reward with
  R0's weight penalty and random eta), the same schedule: the control of the headline
  comparison (claims.yaml), R0 with the paper's contribution, dropping the distillation loss,
  taken out;
- ``unregularised``: the reward-hacking control, the reward alone with no regulariser and no
  random eta, at the aggressive schedule;
- ``r0_aggressive``: R0 at the aggressive schedule.
(The calibration can add ``unregularised_gentle``: R0 without its regulariser, lambda = 0 and
eta = 0, at the gentle schedule.) The teacher is also sampled in ``teacher_eval_steps`` and in ``gen_steps`` steps (the references).
Every sample set of a seed uses the same noise and classes (``per_class`` per digit).
Outputs: data/reward_instruct/samples.npz (keys ``s<seed>_...``), the first verdict seed's R0
generator as an MLflow pyfunc (data/reward_instruct/r0_model, registered) and
reports/reward_instruct/train.json (per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .data import EXTRA_RUNS, RUNS, example_input, sample_key
from .diffusion import load_classifier
from .params import PARAMS
from .paths import GENERATOR_MODEL, MODELS, SAMPLES, TRAIN_METRICS, seed_dir

# named random streams of a seed (stages.common.seeds): the judged noise, the distillation pool,
# then one per run (RNG_RUN + its index in RUNS + EXTRA_RUNS: a run's draws do not depend on
# which other runs ran)
RNG_EVAL, RNG_POOL, RNG_RUN = 10, 11, 20
ALL_RUNS = RUNS + EXTRA_RUNS


def run_specs(p) -> dict:
    """{run: (method, schedule, lambda, random eta)} of the train params ``p``."""
    return {"r0": ("r0", p.gentle, p.gentle.lam, True), "distill": ("distill", p.gentle, 0.0, False),
            "unregularised": ("r0", p.aggressive, 0.0, False),
            "r0_aggressive": ("r0", p.aggressive, p.aggressive.lam, True),
            "distill_regularised": ("distill", p.gentle, p.gentle.lam, True),
            "unregularised_gentle": ("r0", p.gentle, 0.0, False)}


def train_seed(p, teacher, abar, reward, seed: int, runs=RUNS, progress=None) -> dict:
    """One seed's generators (``p``: the train params; ``teacher``, ``abar``, ``reward``: that
    seed's pre-trained models). Returns {samples: {key: array}, summary: {run: ...}, nets: {run:
    net}, cpu_s: {...}}; the samples' keys are those of the samples file without the seed prefix."""
    import copy
    import time

    import numpy as np
    import torch

    from stages.common.seeds import torch_generator

    from . import diffusion as D

    ce = torch.arange(D.N_CLASSES).repeat_interleave(p.per_class)
    ze = torch.randn(len(ce), D.DIM, generator=torch_generator(seed, RNG_EVAL))

    def draw(net, steps):
        with torch.no_grad():
            return D.sample(net, abar, ce, steps, None, eta=0.0, z=ze.clone()).numpy()

    out = {"classes": ce.numpy(), "teacher_ref": draw(teacher, p.teacher_eval_steps),
           "teacher_few": draw(teacher, p.gen_steps)}
    gen = torch_generator(seed, RNG_POOL)
    t0 = time.process_time()
    pc = torch.randint(0, D.N_CLASSES, (p.pool,), generator=gen)
    pz = torch.randn(p.pool, D.DIM, generator=gen)
    with torch.no_grad():
        pool = {"c": pc, "z": pz, "target": D.sample(teacher, abar, pc, p.distill_steps, None, z=pz.clone())}
    cpu, summary, nets = {"pool": time.process_time() - t0}, {}, {}
    specs = run_specs(p)
    for name in runs:
        method, sch, lam, random_eta = specs[name]
        net = copy.deepcopy(teacher)
        net.train()
        checkpoints = list(range(0, sch.steps + 1, sch.every))
        snaps = []
        t0 = time.process_time()
        hist = D.train_generator(
            net, abar, reward, method=method, steps=sch.steps, batch=p.batch, lr=sch.lr, lam=lam,
            random_eta=random_eta, gen_steps=p.gen_steps, gen=torch_generator(seed, RNG_RUN + ALL_RUNS.index(name)),
            checkpoints=checkpoints, on_checkpoint=lambda s: snaps.append(draw(net, p.gen_steps)),
            pool=pool, w_reward=p.w_reward, progress=progress)
        cpu[name] = time.process_time() - t0
        out[f"{name}_steps"], out[f"{name}_x"] = np.array(checkpoints), np.stack(snaps)
        summary[name] = {"steps": sch.steps, "lr": sch.lr, "lam": lam, "random_eta": random_eta,
                         "final_train_reward_logp": hist[-1]["reward_logp"], "final_dtheta2": hist[-1]["dtheta2"],
                         "train_reward_logp": [h["reward_logp"] for h in hist],
                         "dtheta2": [h["dtheta2"] for h in hist]}
        nets[name] = net
    return {"samples": out, "summary": summary, "nets": nets, "cpu_s": cpu}


def main() -> None:
    with stage("reward_instruct", "train", PARAMS) as ctx:
        from pathlib import Path

        from stages.common.device import limit_threads

        limit_threads()        # one torch/BLAS thread: tiny MLPs gain nothing from two
        import numpy as np
        from tqdm import tqdm

        from stages.common.io import atomic_path, write_json
        from stages.common.mlmodel import save_pyfunc
        from stages.common.seeds import per_seed_metrics, run_seeds

        from . import diffusion as D

        p = ctx.params.train
        specs = run_specs(p)
        samples, r0_net = {}, {}

        def one(seed: int) -> dict:
            teacher, abar, cfg = D.load_epsnet(ctx.path(MODELS) / seed_dir(seed) / "teacher.pt")
            reward = load_classifier(ctx.path(MODELS) / seed_dir(seed) / "reward.pt")
            with tqdm(total=sum(specs[n][1].steps for n in RUNS), desc=f"generators, seed {seed}",
                      mininterval=2) as bar:
                res = train_seed(p, teacher, abar, reward, seed, progress=bar)
            samples.update({sample_key(seed, k): v for k, v in res["samples"].items()})
            if not r0_net:
                r0_net.update(net=res["nets"]["r0"], cfg=cfg)
            for name in RUNS:
                s = res["summary"][name]
                ctx.run.log_curve(f"seed{seed}.{name}.reward_logp", s["train_reward_logp"])
                ctx.run.log_curve(f"seed{seed}.{name}.dtheta2", s["dtheta2"])
            # timings vary run to run: MLflow metrics, not the (deterministic) metrics file
            ctx.run.log_metrics({f"seed{seed}.{k}_cpu_s": v for k, v in res["cpu_s"].items()})
            print(f"  seed {seed}: " + "; ".join(
                f"{n}: train reward {res['summary'][n]['final_train_reward_logp']:.3f}, |dtheta|^2 "
                f"{res['summary'][n]['final_dtheta2']:.3g}, {res['cpu_s'][n]:.1f} s CPU" for n in RUNS), flush=True)
            return {n: {k: v for k, v in s.items() if k not in ("train_reward_logp", "dtheta2")}
                    for n, s in res["summary"].items()}

        results = run_seeds(ctx.seeds, one, what="seed (generators)")
        with atomic_path(ctx.path(SAMPLES), suffix=".npz") as tmp:
            np.savez(tmp, **samples)
        weights = ctx.path(GENERATOR_MODEL + ".pt")
        D.save_weights(r0_net["net"], weights, {**r0_net["cfg"], "sample_steps": p.gen_steps})
        save_pyfunc(ctx.path(GENERATOR_MODEL), Path(__file__).with_name("pyfunc.py"), {"weights": weights},
                    input_example=example_input(ctx.path(MODELS) / seed_dir(ctx.seeds[0]), ctx.seeds[0]))
        weights.unlink()
        ctx.run.log_model(ctx.path(GENERATOR_MODEL), "r0_generator",
                          params={**r0_net["cfg"], "sample_steps": p.gen_steps, "seed": ctx.seeds[0],
                                  **p.gentle.model_dump()})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(results))


if __name__ == "__main__":
    main()
