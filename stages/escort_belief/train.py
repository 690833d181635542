"""escort_belief train: run the particle filter, SVGD and ESCORT on every problem, and the
light-dark POMDP episodes, for every verdict seed at once.

Seeds are an axis (docs/VERDICTS.md, section 1): every verdict seed runs in this one process,
and the replications of several seeds are the rows of one batch (their particles in one array,
(rows, n, d)), as many whole seeds together as keep the batch's kernel matrices in cache
(batch.seed_groups: all seeds at the small dimensions, one seed a batch at d = 20). Every draw of
a row comes from its own seed's generator (stages/escort_belief/batch.py), so a seed's figures
are those it gets when it runs alone, however the seeds are grouped (tests/escort_belief/test_seeds.py).

Mixture problems (per dimension, all replications of all seeds at once): every method starts from
the same ``particles`` exact samples of the prior. Each step: propagate the particles through the
transition (F x + u + noise), then
* ``pf``: weight by the observation likelihood (the weighted set is the belief that is scored),
  then systematic resampling;
* ``svgd`` / ``escort``: ``stein.iters`` Stein iterations toward the exact belief's score, from
  the propagated particles (ESCORT: also the correlation-aware sliced term and the temporal pull
  toward the propagated particles; stages/escort_belief/stein.py).
* ``escort_official`` (mixture problems only): ESCORT as the official code's ImprovedSVGD.update
  implements it (stein.official_update, its defaults): from the propagated particles, plain steps
  of the clipped, repulsion-boosted SVGD update plus a temporal term computed once before the
  loop (GSWD regulariser toward the particle manager's *previous* belief, i.e. the belief two
  steps back, as its ParticleManager hands it; GSWD projections fitted once, at the first step,
  and kept), low-density resampling every 20 iterations; same exact-belief score as SVGD/ESCORT.

The stage is a DVC matrix stage over seed shards (``escort_belief-train@0``, ``@1``; run as
``python -m stages.escort_belief.train --shard N``): shard i of n runs the verdict seeds
``seeds[i::n]`` (stages/common/seeds.py, "seeds in shards"), so the Prefect flow runs the two
halves side by side; a seed's figures are the same in any shard.

Outputs, per shard, in data/escort_belief/train/shard-<i>/: particles.npz
(``s<seed>/d<d>/<method>`` particles (reps, steps, n, d), and ``s<seed>/d<d>/pf_w`` weights) and
lightdark.json (per seed, per method); reports/escort_belief/train-<i>.json (process seconds).
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import fail, stage

from .keys import METHODS, MIXTURE_METHODS
from .params import EscortBeliefParams
from .paths import LIGHTDARK, PARTICLES, PROBLEMS, metrics_file, shard_dir

RNG_INIT, RNG_METHOD = 11, 12


def stein_config(sp, ep=None):
    from .stein import SteinConfig

    return SteinConfig(iters=sp.iters, step=sp.step, final_step_frac=sp.final_step_frac,
                       lambda_corr=ep.lambda_corr if ep else 0.0, lambda_temp=ep.lambda_temp if ep else 0.0)


def run_mixture(arr: dict, d: int, tp, seeds, progress=None) -> tuple[dict, dict]:
    """Particles of every method at every step for dimension d, every seed in one batch:
    ``{seed: {method: array}}``; and process seconds per method (the whole batch)."""
    import numpy as np

    from .batch import SeedRngs, split, stack
    from .mixture import (mixture_logp_score, mixture_score, pf_weights, precision, propagate,
                          sample_mixture, systematic_resample)
    from .keys import key
    from .stein import OfficialConfig, gswd_fit, gswd_regularizer, official_update, stein_update

    cache: dict = {}

    def g(k):                                 # the seeds' arrays ``k`` stacked, and the rows of each
        if k not in cache:
            cache[k] = stack([arr[key(s, d, k)] for s in seeds])
        return cache[k][0]

    B, T = g("y").shape[:2]
    counts = cache["y"][1]
    n = tp.particles
    F, u = g("F"), g("u")
    q = np.sqrt(g("Q")[:, 0, 0])
    r = np.sqrt(g("R")[:, 0, 0])
    H = g("H")
    X0 = np.concatenate([np.stack([sample_mixture(np.random.default_rng([s, RNG_INIT, d, b]), arr[key(s, d, "w")][b],
                                                  arr[key(s, d, "m")][b], arr[key(s, d, "P")][b], n)
                                   for b in range(c)]) for s, c in zip(seeds, counts)])
    pre = [precision(g("bP")[:, t]) for t in range(T)]          # each step's belief, for every score
    out, secs = {s: {} for s in seeds}, {}
    for mi, method in enumerate(MIXTURE_METHODS):
        t0 = time.process_time()
        rng = SeedRngs.of(seeds, counts, RNG_METHOD, d, mi)
        X = X0.copy()
        traj, wts = [], []
        cfg = None if method == "pf" else stein_config(tp.stein, tp.escort if method == "escort" else None)
        if method == "escort_official":
            cfg = OfficialConfig(iters=tp.escort_official.iters, step=tp.escort_official.step)
            prev, gswd = X0.copy(), None                # ParticleManager.prev_particles starts as the initial set
        for t in range(T):
            Xp = propagate(rng, X, F, u, q)
            w, m, P, pt = g("bw")[:, t], g("bm")[:, t], g("bP")[:, t], pre[t]
            if method == "pf":
                W = pf_weights(Xp, g("y")[:, t], H, r)
                traj.append(Xp)
                wts.append(W)
                X = np.take_along_axis(Xp, systematic_resample(rng, W)[..., None], axis=1)
            elif method == "escort_official":
                if gswd is None:                        # fitted at the first call, then reused
                    gswd = gswd_fit(rng, prev, Xp, cfg)
                temp = gswd_regularizer(prev, Xp, *gswd, cfg.lambda_temp)
                Xn = official_update(Xp, lambda Y, w=w, m=m, P=P, pt=pt: mixture_logp_score(Y, w, m, P, pt),
                                     cfg, rng, temp)
                prev, X = X, Xn
                traj.append(X)
            else:
                X = stein_update(Xp, lambda Y, w=w, m=m, P=P, pt=pt: mixture_score(Y, w, m, P, pt), cfg, X_pred=Xp)
                traj.append(X)
            if progress is not None:
                progress.update(1)
        for s, part in zip(seeds, split(np.stack(traj, 1), counts)):
            out[s][method] = part
        if method == "pf":
            for s, part in zip(seeds, split(np.stack(wts, 1), counts)):
                out[s]["pf_w"] = part
        secs[method] = time.process_time() - t0
    return out, secs


def run_mixture_seeds(arr: dict, d: int, tp, seeds, progress=None, cache_bytes=None) -> tuple[dict, dict]:
    """:func:`run_mixture` for every seed, whole seeds batched together as batch.seed_groups allows
    (``cache_bytes``: its default, or ``float('inf')`` for all seeds in one batch): ``{seed: {method:
    array}}`` and the process seconds per method summed over the batches."""
    from .batch import CACHE_BYTES, seed_groups
    from .keys import key

    counts = [len(arr[key(s, d, "y")]) for s in seeds]
    out, secs = {}, {}
    for group in seed_groups(counts, tp.particles, CACHE_BYTES if cache_bytes is None else cache_bytes):
        part, sec = run_mixture(arr, d, tp, [seeds[i] for i in group], progress)
        out.update(part)
        secs = {m: secs.get(m, 0.0) + v for m, v in sec.items()}
    return out, secs


def run_episodes_seeds(method: str, lp, cfg, seeds, progress=None, cache_bytes=None) -> dict:
    """lightdark.run_episodes for every seed, whole seeds batched as batch.seed_groups allows."""
    from .batch import CACHE_BYTES, seed_groups
    from .lightdark import run_episodes

    out = {}
    for group in seed_groups([lp.episodes] * len(seeds), lp.particles,
                             CACHE_BYTES if cache_bytes is None else cache_bytes):
        out.update(run_episodes(method, lp, cfg, [seeds[i] for i in group], progress))
    return out


def lightdark_record(res: dict) -> dict:
    """One seed's light-dark episodes of one method, as lightdark.json keeps them."""
    return {"returns": res["returns"].tolist(), "success": res["success"].astype(int).tolist(),
            "steps": res["steps"].tolist(), "declared": res["declared"].astype(int).tolist(),
            "mean_error": res["mean_error"]}


def main() -> None:
    with stage("escort_belief", "train", EscortBeliefParams) as ctx:
        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz

        from .keys import key, missing_keys

        limit_threads()
        tp, pp, seeds = ctx.params.train, ctx.params.prepare, ctx.seeds
        src = ctx.path(PROBLEMS)
        with np.load(src) as z:
            arr = {k: z[k] for k in z.files}
        index = ctx.shard[0] if ctx.shard else 0
        out_dir = ctx.path(shard_dir(index))
        missing = missing_keys(arr, seeds, pp.dims, "y")
        if missing:
            fail(f"{PROBLEMS} has no problems for {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}: run "
                 f"`dvc repro stages/escort_belief/dvc.yaml:escort_belief-prepare`")
        particles, timing = {}, {"mixture": {}, "lightdark": {}}
        steps = sum(arr[key(seeds[0], d, "y")].shape[1] for d in pp.dims) * len(MIXTURE_METHODS) if seeds else 0
        with tqdm(desc=f"mixture filtering steps (per batch of seeds; {len(seeds)} seeds, {steps} steps each)",
                  mininterval=2) as bar:
            for d in pp.dims if seeds else ():
                out, secs = run_mixture_seeds(arr, d, tp, seeds, bar)
                for s in seeds:
                    for k, v in out[s].items():
                        particles[key(s, d, k)] = v
                timing["mixture"][f"d{d}"] = secs
        write_npz(out_dir / PARTICLES, particles)
        lp = tp.lightdark
        ld = {str(s): {} for s in seeds}
        with tqdm(desc="light-dark steps (per batch of seeds)", mininterval=2) as bar:
            for method in METHODS if seeds else ():
                t0 = time.process_time()
                cfg = None if method == "pf" else stein_config(lp.stein, tp.escort if method == "escort" else None)
                res = run_episodes_seeds(method, lp, cfg, seeds, bar)
                timing["lightdark"][method] = time.process_time() - t0
                for s in seeds:
                    ld[str(s)][method] = lightdark_record(res[s])
                print(f"  light-dark {method}: mean return per seed "
                      + ", ".join(f"{s}: {res[s]['returns'].mean():.2f}" for s in seeds), flush=True)
        write_json(out_dir / LIGHTDARK, ld)
        write_json(ctx.path(metrics_file(index)), {"shard": list(ctx.shard or (0, 1)), "process_s": timing, "seeds": list(seeds), "particles": tp.particles,
                                       "stein_iters": tp.stein.iters, "lightdark_episodes": lp.episodes})


if __name__ == "__main__":
    main()
