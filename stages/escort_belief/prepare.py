"""escort_belief prepare: the filtering problems and their exact beliefs, generated from each
verdict seed.

A verdict seed is one independent repetition of the whole experiment: for every seed of the
profile (``ctx.seeds``), every dimension d of ``dims`` and replication b < ``reps`` (``reps_dmax``
at the largest d, where the must row compares ESCORT with the particle filter): a correlated
Gaussian-mixture model whose modes drift (stages/escort_belief/mixture.py), a true trajectory with
``steps`` observations, the exact belief after each observation (one Kalman filter per mode), and
``eval_samples`` exact samples of each belief (what the methods are scored against). A seed's
problems are the ones it got when the study ran one seed.

Outputs: data/escort_belief/problems.npz (arrays keyed ``s<seed>/d<d>/<name>``, see keys.key),
reports/escort_belief/prepare.json (sizes; per seed, how multi-modal the exact beliefs stay).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import EscortBeliefParams
from .paths import PREPARE_METRICS, PROBLEMS

RNG_MODEL, RNG_TRAJ, RNG_SAMPLES = 1, 2, 3
MODEL_KEYS = ("w", "m", "P", "F", "u", "Q", "H", "R")


def build_problems(p, seed: int) -> dict:
    """{"d<d>/<name>": array} for every dimension (arrays stacked over replications)."""
    import numpy as np

    from .mixture import build_model, exact_beliefs, sample_mixture, simulate

    out = {}
    for d in p.dims:
        per = {k: [] for k in (*MODEL_KEYS, "x", "y", "bw", "bm", "bP", "exact")}
        for b in range(p.reps_at(d)):
            model = build_model(np.random.default_rng([seed, RNG_MODEL, d, b]), d, p.mixture)
            xs, ys = simulate(np.random.default_rng([seed, RNG_TRAJ, d, b]), model, p.steps)
            bel = exact_beliefs(model, ys)
            rs = np.random.default_rng([seed, RNG_SAMPLES, d, b])
            for k in MODEL_KEYS:
                per[k].append(model[k])
            per["x"].append(xs)
            per["y"].append(ys)
            per["bw"].append([e["w"] for e in bel])
            per["bm"].append([e["m"] for e in bel])
            per["bP"].append([e["P"] for e in bel])
            per["exact"].append([sample_mixture(rs, e["w"], e["m"], e["P"], p.eval_samples) for e in bel])
        for k, v in per.items():
            out[f"d{d}/{k}"] = np.asarray(v, dtype=float)
    return out


def main() -> None:
    with stage("escort_belief", "prepare", EscortBeliefParams) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics

        p = ctx.params.prepare
        arrays, per_seed = {}, {}
        for seed in ctx.seeds:
            own = build_problems(p, seed)
            arrays.update({f"s{seed}/{k}": v for k, v in own.items()})
            per_seed[seed] = {"effective_modes_final": {}}
            for d in p.dims:
                w = own[f"d{d}/bw"][:, -1]                                 # (reps, K) final weights
                eff = 1.0 / (w ** 2).sum(-1)                               # effective number of modes
                per_seed[seed]["effective_modes_final"][f"d{d}"] = float(np.mean(eff))
                print(f"  seed {seed}, d={d} ({len(eff)} replications): effective modes of the final "
                      f"exact belief {np.round(eff, 2).tolist()}", flush=True)
        write_npz(ctx.path(PROBLEMS), arrays)
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(
            per_seed, dims=list(p.dims), reps=p.reps, reps_dmax=p.reps_at(max(p.dims)), steps=p.steps,
            modes=p.mixture.modes, eval_samples=p.eval_samples))


if __name__ == "__main__":
    main()
