"""escort_belief train: run the particle filter, SVGD and ESCORT on every problem, and the
light-dark POMDP episodes.

Mixture problems (per dimension, all replications at once): every method starts from the same
``particles`` exact samples of the prior. Each step: propagate the particles through the
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

Outputs: data/escort_belief/particles.npz (``d<d>/<method>`` particles (reps, steps, n, d), and
``d<d>/pf_w`` weights), data/escort_belief/lightdark.json, reports/escort_belief/train.json.
"""
from __future__ import annotations

import time

from stages.common.stage import fail, stage

from .params import EscortBeliefParams
from .prepare import PROBLEMS

PARTICLES = "data/escort_belief/particles.npz"
LIGHTDARK = "data/escort_belief/lightdark.json"
METRICS = "reports/escort_belief/train.json"
METHODS = ("pf", "svgd", "escort")                       # light-dark and mixture problems
MIXTURE_METHODS = METHODS + ("escort_official",)         # mixture problems only (budget)
RNG_INIT, RNG_METHOD = 11, 12


def stein_config(sp, ep=None):
    from .stein import SteinConfig

    return SteinConfig(iters=sp.iters, step=sp.step, final_step_frac=sp.final_step_frac,
                       lambda_corr=ep.lambda_corr if ep else 0.0, lambda_temp=ep.lambda_temp if ep else 0.0)


def run_mixture(arr: dict, d: int, tp, seed: int, progress=None) -> tuple[dict, dict]:
    """Particles of every method at every step for dimension d; and seconds per method."""
    import numpy as np

    from .mixture import mixture_logp_score, mixture_score, pf_weights, propagate, sample_mixture, systematic_resample
    from .stein import OfficialConfig, gswd_fit, gswd_regularizer, official_update, stein_update

    g = lambda k: arr[f"d{d}/{k}"]  # noqa: E731
    B, T = g("y").shape[:2]
    n = tp.particles
    F, u = g("F"), g("u")
    q = np.sqrt(g("Q")[:, 0, 0])
    r = np.sqrt(g("R")[:, 0, 0])
    H = g("H")
    X0 = np.stack([sample_mixture(np.random.default_rng([seed, RNG_INIT, d, b]), g("w")[b], g("m")[b], g("P")[b], n)
                   for b in range(B)])
    out, secs = {}, {}
    for mi, method in enumerate(MIXTURE_METHODS):
        t0 = time.process_time()
        rng = np.random.default_rng([seed, RNG_METHOD, d, mi])
        X = X0.copy()
        traj, wts = [], []
        cfg = None if method == "pf" else stein_config(tp.stein, tp.escort if method == "escort" else None)
        if method == "escort_official":
            cfg = OfficialConfig(iters=tp.escort_official.iters, step=tp.escort_official.step)
            prev, gswd = X0.copy(), None                # ParticleManager.prev_particles starts as the initial set
        for t in range(T):
            Xp = propagate(rng, X, F, u, q)
            if method == "pf":
                W = pf_weights(Xp, g("y")[:, t], H, r)
                traj.append(Xp)
                wts.append(W)
                X = np.take_along_axis(Xp, systematic_resample(rng, W)[..., None], axis=1)
            elif method == "escort_official":
                w, m, P = g("bw")[:, t], g("bm")[:, t], g("bP")[:, t]
                if gswd is None:                        # fitted at the first call, then reused
                    gswd = gswd_fit(rng, prev, Xp, cfg)
                temp = gswd_regularizer(prev, Xp, *gswd, cfg.lambda_temp)
                Xn = official_update(Xp, lambda Y, w=w, m=m, P=P: mixture_logp_score(Y, w, m, P), cfg, rng, temp)
                prev, X = X, Xn
                traj.append(X)
            else:
                w, m, P = g("bw")[:, t], g("bm")[:, t], g("bP")[:, t]
                X = stein_update(Xp, lambda Y, w=w, m=m, P=P: mixture_score(Y, w, m, P), cfg, X_pred=Xp)
                traj.append(X)
            if progress is not None:
                progress.update(1)
        out[method] = np.stack(traj, 1)
        if method == "pf":
            out["pf_w"] = np.stack(wts, 1)
        secs[method] = time.process_time() - t0
    return out, secs


def main() -> None:
    with stage("escort_belief", "train", EscortBeliefParams) as ctx:
        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz

        from .lightdark import run_episodes

        limit_threads()
        tp, pp = ctx.params.train, ctx.params.prepare
        src = ctx.path(PROBLEMS)
        if not src.exists():
            fail(f"{PROBLEMS} is missing: run `dvc repro stages/escort_belief/dvc.yaml:escort_belief-prepare` first")
        with np.load(src) as z:
            arr = {k: z[k] for k in z.files}
        missing = [d for d in pp.dims if f"d{d}/y" not in arr]
        if missing:
            fail(f"{PROBLEMS} has no problems for dims {missing}: run `dvc repro stages/escort_belief/dvc.yaml:escort_belief-prepare`")
        particles, timing = {}, {"mixture": {}, "lightdark": {}}
        steps = sum(arr[f"d{d}/y"].shape[1] for d in pp.dims) * len(MIXTURE_METHODS)
        with tqdm(total=steps, desc="mixture filtering steps", mininterval=2) as bar:
            for d in pp.dims:
                out, secs = run_mixture(arr, d, tp, ctx.seed, bar)
                for k, v in out.items():
                    particles[f"d{d}/{k}"] = v
                timing["mixture"][f"d{d}"] = secs
        write_npz(ctx.path(PARTICLES), particles)
        lp = tp.lightdark
        ld = {}
        with tqdm(total=lp.horizon * len(METHODS), desc="light-dark steps", mininterval=2) as bar:
            for method in METHODS:
                t0 = time.process_time()
                cfg = None if method == "pf" else stein_config(lp.stein, tp.escort if method == "escort" else None)
                res = run_episodes(method, lp, cfg, ctx.seed, bar)
                timing["lightdark"][method] = time.process_time() - t0
                ld[method] = {"returns": res["returns"].tolist(), "success": res["success"].astype(int).tolist(),
                              "steps": res["steps"].tolist(), "declared": res["declared"].astype(int).tolist(),
                              "mean_error": res["mean_error"]}
                print(f"  light-dark {method}: mean return {res['returns'].mean():.2f}, success "
                      f"{res['success'].mean():.2f}, belief-mean error {res['mean_error']:.3f}", flush=True)
        write_json(ctx.path(LIGHTDARK), ld)
        write_json(ctx.path(METRICS), {"process_s": timing, "particles": tp.particles,
                                       "stein_iters": tp.stein.iters, "lightdark_episodes": lp.episodes})


if __name__ == "__main__":
    main()
