"""curriculum_rerm train: every arm of the three experiments, every verdict seed, in one batch.

Each verdict seed (``ctx.seeds``) is one independent repetition of the whole experiment: its own
``replications`` draws of tasks and data, each from the seed's own generators
(``stages.common.seeds.rng`` / ``torch_generator`` with a stream per experiment). The seeds'
replications are stacked along the batch axis and solved together; a seed's figures are the
same whichever seeds run beside it (tests/curriculum_rerm/test_seeds.py).

1. Ridge (closed form, ``stages/curriculum_rerm/rerm.py``): T tasks of n samples in d dimensions;
   the good, violating and reversed curricula, direct training on the final task's n samples
   (equal target data), on T n target samples (equal total data) and on the good curriculum's
   T n rows pooled (its data without the curriculum), each by biased RERM at every lambda of the
   log-spaced sweep. Final-task excess risk ||w - w*||^2 per replication and lambda.
2. SGD: the good and violating curricula, direct and direct_total, per-sample SGD on the same
   biased objective at one lambda, plus the closed form at that lambda for reference.
3. Digits (``stages/curriculum_rerm/digits.py``): an MLP, 3 stages (clean -> half noise -> full
   noise) vs direct (the last stage's images only) vs the label-permuted (violating) and reversed
   curricula vs the curriculum's images pooled vs all images at full noise; test error on noisy
   test digits per replication.

Outputs: data/curriculum_rerm/results.npz (per seed and replication; evaluate reads it) and
reports/curriculum_rerm/train.json (sizes; no timings, so equal params give an equal file).
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import stage

from .params import CurriculumParams
from .paths import RESULTS, TRAIN_METRICS

RNG_RIDGE, RNG_SGD, RNG_DIGITS, RNG_INIT = 1, 2, 3, 4


def lambda_grid(g):
    import numpy as np

    return np.geomspace(g.low, g.high, g.points)


def largest_step(optima):
    """max_t ||w*_t - w*_(t-1)|| per replication (optima (S, T, d), w*_0 = 0: the first task's bias)."""
    import numpy as np

    padded = np.concatenate([np.zeros_like(optima[:, :1]), optima], axis=1)
    return np.linalg.norm(np.diff(padded, axis=1), axis=2).max(axis=1)


def split(arrays: dict, seeds, reps: int) -> dict:
    """``{key: (len(seeds) * reps, ...)}`` -> ``{seed: {key: (reps, ...)}}`` (rows in seed order)."""
    return {s: {k: v[i * reps:(i + 1) * reps] for k, v in arrays.items()} for i, s in enumerate(seeds)}


def run_ridge(p, sp, seeds) -> dict:
    """Closed-form excess risks (reps, L) per arm over the lambda grid, the SGD arms (reps,) and the
    curricula's r, for every seed: ``{seed: {key: array}}``."""
    import numpy as np

    from stages.common.seeds import rng

    from .rerm import RIDGE_ARMS, SGD_ARMS, Tasks, make_tasks, ridge_arms, sgd_arms

    R = p.replications
    tasks = Tasks.concat([make_tasks(rng(s, RNG_RIDGE), R, p.n_tasks, p.n_per_task, p.dim, p.w_norm, p.noise,
                                     p.jitter) for s in seeds])
    lams = lambda_grid(p.lambdas)
    out = {}
    for arm, v in ridge_arms(tasks, lams, RIDGE_ARMS).items():
        out[f"ridge.{arm}"] = v
    for arm, v in ridge_arms(tasks, np.array([sp.lam]), SGD_ARMS).items():
        out[f"sgd.closed_form.{arm}"] = v[:, 0]
    sgd_rngs = [(rng(s, RNG_SGD), R) for s in seeds]
    for arm, v in sgd_arms(tasks, sp.lam, sp.step, sp.epochs, sgd_rngs, SGD_ARMS).items():
        out[f"sgd.{arm}"] = v
    for arm in ("good", "violating", "reversed"):                    # r of the (r, alpha) condition
        out[f"ridge.r_{arm}"] = largest_step(tasks.optima[arm])
    return split(out, seeds, R)


def run_digits(p, seeds, progress=None) -> dict:
    """Test error (reps,) of every digits arm for every seed: ``{seed: {key: array}}``."""
    import torch

    from stages.common.seeds import rng, torch_generator

    from .digits import ARMS, DigitTasks, init_params, load_images, make_digit_tasks, total_steps, train_arms

    images, labels = load_images()
    R = p.replications
    tasks = DigitTasks.concat([make_digit_tasks(images, labels, rng(s, RNG_DIGITS), R, p.per_stage, p.n_test,
                                                p.noise, list(p.levels)) for s in seeds])
    sizes = [tasks.X_test.shape[2], *p.hidden, 10]
    init = [torch.cat(parts) for parts in zip(*[init_params(R, sizes, torch_generator(s, RNG_INIT)) for s in seeds])]
    if progress is not None:
        progress.total = (progress.total or 0) + total_steps(tasks, p.steps)
    err = train_arms(tasks, init, p.lam, p.lr, p.steps, ARMS, tick=progress.update if progress is not None else None)
    return split({f"digits.{a}": err[a] for a in ARMS}, seeds, R)


def run_all(tp, seeds, group: int | None = None, progress=None) -> dict:
    """Every experiment for every seed, ``group`` seeds per batch (None: all in one batch):
    ``{seed: {key: array}}``. The figures are the same for any grouping."""
    groups = [list(seeds)] if not group else [list(seeds[i:i + group]) for i in range(0, len(seeds), group)]
    out = {s: {} for s in seeds}
    for g in groups:
        for s, v in run_ridge(tp.ridge, tp.sgd, g).items():
            out[s].update(v)
        for s, v in run_digits(tp.digits, g, progress).items():
            out[s].update(v)
    return out


def main() -> None:
    with stage("curriculum_rerm", "train", CurriculumParams) as ctx:
        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz

        limit_threads()
        tp, seeds = ctx.params.train, list(ctx.seeds)
        t0 = time.perf_counter()
        ridge = run_ridge(tp.ridge, tp.sgd, seeds)
        t_ridge = time.perf_counter() - t0
        t0 = time.perf_counter()
        with tqdm(desc=f"digits: {len(seeds)} seeds x {tp.digits.replications} replications, full-batch steps",
                  mininterval=2.0, total=0) as bar:
            digits = run_digits(tp.digits, seeds, bar)
        t_digits = time.perf_counter() - t0
        keys = [*ridge[seeds[0]], *digits[seeds[0]]]
        res = {k: np.stack([{**ridge[s], **digits[s]}[k] for s in seeds]) for k in keys}
        res["seeds"] = np.array(seeds)
        res["ridge.lambdas"] = lambda_grid(tp.ridge.lambdas)
        write_npz(ctx.path(RESULTS), res)
        write_json(ctx.path(TRAIN_METRICS), {
            "seeds": seeds,
            "ridge": {"replications": tp.ridge.replications, "tasks": tp.ridge.n_tasks,
                      "n_per_task": tp.ridge.n_per_task, "dim": tp.ridge.dim, "lambdas": tp.ridge.lambdas.points},
            "digits": {"replications": tp.digits.replications, "per_stage": tp.digits.per_stage,
                       "n_test": tp.digits.n_test},
        })
        print(f"  {len(seeds)} seeds: ridge + SGD {t_ridge:.1f}s, digits {t_digits:.1f}s", flush=True)


if __name__ == "__main__":
    main()
