"""efg_altpg train: regularized and unregularized alternating policy gradient, the sampled
variant, the iterations-to-epsilon sweep, and OpenSpiel's CFR+.

Per game (Kuhn, Leduc, each random EFG) and parametrisation (direct, softmax, NPG), with
exact gradients: every step of the variant's grid, with tau (regularized) and with tau = 0
(unregularized), from ``inits`` random initial policies (the same ones for every variant
and step). The last-iterate exploitability is recorded along the run with our sequence-form
best responses and, for the last iterate, with OpenSpiel's ``exploitability.exploitability``
(their difference is logged). The step kept per (variant, regularized or not) is the one
with the lowest mean exploitability over the last ``last_fraction`` of the rounds.
Also: the sampled-trajectory runs, the iterations-to-epsilon sweep (tau = c * epsilon,
first round with exploitability <= epsilon, several seeds) and CFR+ (average and current
policy). Writes data/efg_altpg/runs.json and reports/efg_altpg/train.json.
"""
from __future__ import annotations

import time
import zlib

from stages.common.runtime.stage import fail, stage

from .games import VARIANTS, load_game, random_game_names
from .params import EfgAltPGParams
from .paths import GAMES, RUNS, TRAIN_REPORT


def rng_for(seed: int, *keys):
    """A generator seeded by the study seed and any labels (strings hashed stably)."""
    import numpy as np

    ints = [k if isinstance(k, int) else zlib.crc32(str(k).encode()) for k in keys]
    return np.random.default_rng([seed, *ints])


def late_mean(iters, expl, iterations: int, fraction: float) -> float:
    """Mean recorded exploitability over the last ``fraction`` of the rounds."""
    import numpy as np

    iters, expl = np.asarray(iters), np.asarray(expl)
    return float(expl[iters >= (1.0 - fraction) * iterations].mean())


def one_run(sf, game, variant: str, tau: float, eta: float, iterations: int, eval_every: int,
            rng, tp, episodes: int = 0, progress=None) -> dict:
    """One alternating-PG run and what is kept of it."""
    from . import algorithms as al
    from .seqform import openspiel_exploitability

    res = al.run(sf, variant, tau, eta, iterations, rng, floor=tp.floor, init_scale=tp.init_scale,
                 eval_every=eval_every, episodes=episodes, progress=progress)
    last_os = openspiel_exploitability(game, sf, res.pis)
    return {"iters": res.iters.tolist(), "expl": res.expl.tolist(),
            "late_mean": late_mean(res.iters, res.expl, iterations, tp.last_fraction),
            "last": float(res.expl[-1]), "last_openspiel": last_os,
            "last_abs_diff": abs(last_os - float(res.expl[-1]))}


def grid_runs(sf, game, name: str, gp, tp, seed: int, bar) -> dict:
    """Every variant x (regularized, unregularized) x step x init on one game; the kept step."""
    import numpy as np

    out: dict = {"tau": gp.tau, "iterations": gp.iterations}
    for variant in VARIANTS:
        out[variant] = {}
        for kind, tau in (("reg", gp.tau), ("unreg", 0.0)):
            by_step = {}
            for eta in getattr(gp.steps, variant):
                runs = [one_run(sf, game, variant, tau, eta, gp.iterations, gp.eval_every,
                                rng_for(seed, name, "init", i), tp, progress=bar)
                        for i in range(gp.inits)]
                by_step[eta] = runs
            score = {eta: float(np.mean([r["late_mean"] for r in runs])) for eta, runs in by_step.items()}
            best = min(score, key=score.get)
            out[variant][kind] = {"tau": tau, "step": best, "grid": {repr(k): v for k, v in score.items()},
                                  "runs": by_step[best]}
            others = [r for eta, runs in by_step.items() for r in runs]
            out[variant][kind]["max_last_abs_diff"] = max(r["last_abs_diff"] for r in others)
    return out


def rate_sweep(sf, rp, tp, seed: int, bar) -> dict:
    """Rounds until the last iterate's exploitability first reaches epsilon, tau = c * epsilon."""
    from . import algorithms as al

    out: dict = {"epsilons": list(rp.epsilons), "tau_over_epsilon": rp.tau_over_epsilon,
                 "max_iterations": rp.max_iterations, "variants": {}}
    for variant in rp.variants:
        eta = getattr(rp.steps, variant)
        table = []
        for s in range(rp.seeds):
            row = []
            for eps in rp.epsilons:
                res = al.run(sf, variant, rp.tau_over_epsilon * eps, eta, rp.max_iterations,
                             rng_for(seed, "rate", s), floor=tp.floor, init_scale=tp.init_scale,
                             targets=(eps,), stop_at_targets=True)
                row.append(res.hit[eps])
                bar.update(1)
            table.append(row)
        out["variants"][variant] = {"step": eta, "iterations": table}
    return out


def main() -> None:
    with stage("efg_altpg", "train", EfgAltPGParams) as ctx:
        import pyspiel  # noqa: F401 - fail early if OpenSpiel is missing
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json

        from .baseline import cfr_plus
        from .seqform import SequenceForm

        limit_threads()
        p = ctx.params
        tp = p.train
        games_dir = ctx.path(GAMES)
        names = ["kuhn_poker", "leduc_poker"] + random_game_names(p.prepare.random.count)
        missing = [n for n in names if not (games_dir / f"{n}.npz").exists()]
        if missing:
            fail(f"{GAMES}: no sequence form for {missing}; run `dvc repro stages/efg_altpg/dvc.yaml:efg_altpg-prepare`")
        sfs = {n: SequenceForm.load(games_dir / f"{n}.npz") for n in names}
        games = {n: load_game(games_dir, n) for n in names}
        runs: dict = {"games": {}, "cfr_plus": {}}
        timing: dict = {}

        def grid_size(gp) -> int:
            return 2 * gp.inits * sum(len(getattr(gp.steps, v)) for v in VARIANTS) * gp.iterations

        for name in names:
            gp = tp.random if name.startswith("random_") else getattr(tp, name)
            t0 = time.perf_counter()
            with tqdm(total=grid_size(gp), desc=f"{name} PG", unit="round", mininterval=2.0,
                      miniters=1000) as bar:
                runs["games"][name] = grid_runs(sfs[name], games[name], name, gp, tp, ctx.seed, bar)
            timing[name] = time.perf_counter() - t0

        sp = tp.sampled
        t0 = time.perf_counter()
        runs["sampled"] = {"game": sp.game, "tau": sp.tau, "episodes": sp.episodes,
                           "iterations": sp.iterations}
        n_sampled = sum(len(getattr(sp.steps, v)) + 1 for v in VARIANTS) * sp.iterations
        with tqdm(total=n_sampled, desc=f"{sp.game} sampled", unit="round", mininterval=2.0,
                  miniters=1000) as bar:
            for variant in VARIANTS:
                # one initial policy for every variant and step (the generator's first draws)
                by_step = {eta: one_run(sfs[sp.game], games[sp.game], variant, sp.tau, eta, sp.iterations,
                                        sp.eval_every, rng_for(ctx.seed, sp.game, "sampled"), tp,
                                        episodes=sp.episodes, progress=bar)
                           for eta in getattr(sp.steps, variant)}
                best = min(by_step, key=lambda e: by_step[e]["late_mean"])
                # control: exact gradients from the same initial policy with the same step
                exact = one_run(sfs[sp.game], games[sp.game], variant, sp.tau, best, sp.iterations,
                                sp.eval_every, rng_for(ctx.seed, sp.game, "sampled"), tp, progress=bar)
                runs["sampled"][variant] = {"step": best, **by_step[best],
                                            "grid": {repr(e): r["late_mean"] for e, r in by_step.items()},
                                            "exact_control": {k: exact[k] for k in
                                                              ("iters", "expl", "late_mean", "last_openspiel")}}
        timing["sampled"] = time.perf_counter() - t0

        rp = tp.rate
        t0 = time.perf_counter()
        with tqdm(total=len(rp.variants) * rp.seeds * len(rp.epsilons), desc="iterations to epsilon",
                  unit="run", mininterval=2.0) as bar:
            runs["rate"] = {"game": rp.game, **rate_sweep(sfs[rp.game], rp, tp, ctx.seed, bar)}
        timing["rate"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        for name in names:
            n_it = tp.cfr_plus.random if name.startswith("random_") else getattr(tp.cfr_plus, name)
            runs["cfr_plus"][name] = cfr_plus(games[name], n_it, tp.cfr_plus.checkpoints)
            print(f"  CFR+ {name}: {n_it} iterations, average-policy exploitability "
                  f"{runs['cfr_plus'][name]['average'][-1]:.2e}", flush=True)
        timing["cfr_plus"] = time.perf_counter() - t0

        write_json(ctx.path(RUNS), runs)
        summary = {"seconds": timing, "cfr_plus_solve_s": {k: c["solve_s"] for k, c in runs["cfr_plus"].items()},
                   "games": {}}
        for name, g in runs["games"].items():
            summary["games"][name] = {
                v: {k: {"step": g[v][k]["step"], "late_mean": float(sum(r["late_mean"] for r in g[v][k]["runs"])
                                                                    / len(g[v][k]["runs"])),
                        "last_openspiel_max": max(r["last_openspiel"] for r in g[v][k]["runs"])}
                    for k in ("reg", "unreg")} for v in VARIANTS}
            for v in VARIANTS:
                s = summary["games"][name][v]
                print(f"  {name} {v}: regularized (step {s['reg']['step']:g}) late {s['reg']['late_mean']:.4f}, "
                      f"last {s['reg']['last_openspiel_max']:.4f}; unregularized (step {s['unreg']['step']:g}) "
                      f"late {s['unreg']['late_mean']:.4f}", flush=True)
        write_json(ctx.path(TRAIN_REPORT), summary)


if __name__ == "__main__":
    main()
