"""curriculum_rerm train: every arm of the three experiments, all seeds at once.

1. Ridge (closed form, ``stages/curriculum_rerm/rerm.py``): T tasks of n samples in d dimensions;
   the good curriculum, the violating curriculum, direct training on the final task's n samples
   (equal target data) and on T n target samples (equal total data), each by biased RERM at
   every lambda of the log-spaced sweep. Final-task excess risk ||w - w*||^2 per seed and lambda.
2. SGD: the same tasks and arms, per-sample SGD on the same biased objective at one lambda, plus
   the closed form at that lambda for reference.
3. Digits (``stages/curriculum_rerm/digits.py``): an MLP, 3 stages (clean -> half noise -> full
   noise) vs direct (the last stage's images only) vs a label-permuted curriculum vs all images
   at full noise; test error on noisy test digits per seed.

Outputs: data/curriculum_rerm/results.npz (per-seed figures; evaluate reads it) and
reports/curriculum_rerm/train.json (sizes; no timings, so equal params give an equal file).
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import stage

from .params import CurriculumParams
from .paths import RESULTS, TRAIN_METRICS

RNG_RIDGE, RNG_SGD, RNG_DIGITS = 1, 2, 3


def lambda_grid(g):
    import numpy as np

    return np.geomspace(g.low, g.high, g.points)


def largest_step(optima):
    """max_t ||w*_t - w*_(t-1)|| per seed (optima (S, T, d), w*_0 = 0: the first task's bias)."""
    import numpy as np

    padded = np.concatenate([np.zeros_like(optima[:, :1]), optima], axis=1)
    return np.linalg.norm(np.diff(padded, axis=1), axis=2).max(axis=1)


def run_ridge(p, sp, seed: int) -> dict:
    """Closed-form excess risks (S, L) per arm over the lambda grid, and the SGD arms (S,)."""
    import numpy as np

    from .rerm import make_tasks, ridge_arms, sgd_arms

    tasks = make_tasks(np.random.default_rng([seed, RNG_RIDGE]), p.seeds, p.n_tasks, p.n_per_task, p.dim,
                       p.w_norm, p.noise, p.jitter)
    lams = lambda_grid(p.lambdas)
    out = {"ridge.lambdas": lams}
    for arm, v in ridge_arms(tasks, lams).items():
        out[f"ridge.{arm}"] = v
    for arm, v in ridge_arms(tasks, np.array([sp.lam])).items():
        out[f"sgd.closed_form.{arm}"] = v[:, 0]
    for arm, v in sgd_arms(tasks, sp.lam, sp.step, sp.epochs, np.random.default_rng([seed, RNG_SGD])).items():
        out[f"sgd.{arm}"] = v
    out["ridge.r_good"] = largest_step(tasks.optima["good"])          # r of the (r, alpha) condition
    out["ridge.r_violating"] = largest_step(tasks.optima["violating"])
    return out


def run_digits(p, seed: int) -> dict:
    import numpy as np
    from tqdm import tqdm

    from .digits import ARMS, load_images, make_digit_tasks, train_arms

    images, labels = load_images()
    tasks = make_digit_tasks(images, labels, np.random.default_rng([seed, RNG_DIGITS]), p.seeds, p.per_stage,
                             p.n_test, p.noise, list(p.levels))
    n_stage_runs = sum(len(tasks.stages[a]) for a in ARMS)
    with tqdm(total=n_stage_runs, desc=f"digits: {p.seeds} seeds x stages", mininterval=1.0) as bar:
        err = train_arms(tasks, list(p.hidden), p.lam, p.lr, p.steps, torch_seed=seed * 1000 + RNG_DIGITS,
                         progress=bar)
    return {f"digits.{a}": err[a] for a in ARMS}


def main() -> None:
    with stage("curriculum_rerm", "train", CurriculumParams) as ctx:
        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz

        limit_threads()
        tp = ctx.params.train
        t0 = time.perf_counter()
        res = run_ridge(tp.ridge, tp.sgd, ctx.seed)
        t_ridge = time.perf_counter() - t0
        t0 = time.perf_counter()
        res.update(run_digits(tp.digits, ctx.seed))
        t_digits = time.perf_counter() - t0
        write_npz(ctx.path(RESULTS), res)
        write_json(ctx.path(TRAIN_METRICS), {
            "ridge": {"seeds": tp.ridge.seeds, "tasks": tp.ridge.n_tasks, "n_per_task": tp.ridge.n_per_task,
                      "dim": tp.ridge.dim, "lambdas": len(res["ridge.lambdas"])},
            "digits": {"seeds": tp.digits.seeds, "per_stage": tp.digits.per_stage, "n_test": tp.digits.n_test},
        })
        print(f"  ridge + SGD {t_ridge:.1f}s, digits {t_digits:.1f}s", flush=True)


if __name__ == "__main__":
    main()
