"""efg_altpg train: regularized and unregularized alternating policy gradient, the sampled
variant, the iterations-to-epsilon sweep, and OpenSpiel's CFR+, for every verdict seed.

A verdict seed (``ctx.seeds``) is one independent repetition of the whole experiment: it draws
the initial policies of every run, the sampled episodes, and its own random games (prepare).
The runs of all seeds advance together, a run per column (:func:`algorithms.run_batch`); a run's
figures do not depend on what else shares its batch.

Per game (Kuhn, Leduc: every seed; each seed's random EFGs) and parametrisation (direct,
softmax, NPG), with exact gradients: every step of the variant's grid, with tau (regularized)
and with tau = 0 (unregularized), from ``inits`` random initial policies per seed (the same
ones for every variant and step). The last-iterate exploitability and that of the average
iterate are recorded along the run with our sequence-form best responses; for each kept run's
last iterate also with OpenSpiel's ``exploitability.exploitability`` (their difference is
logged). The step kept per (seed, variant, regularized or not) is the one with the lowest mean
last-iterate exploitability over the last ``last_fraction`` of the rounds, averaged over the
seed's inits. Also: the sampled-trajectory runs, the iterations-to-epsilon sweep (tau = c *
epsilon, first round with exploitability <= epsilon, ``starts`` initial policies per seed) and
CFR+ (average and current policy; deterministic, once per game). Writes data/efg_altpg/runs.json
and reports/efg_altpg/train.json.
"""
from __future__ import annotations

import time
import zlib

from stages.common.runtime.stage import fail, stage

from .games import VARIANTS, game_dir, load_game, random_game_names
from .params import EfgAltPGParams
from .paths import GAMES, RUNS, TRAIN_REPORT


def rng_for(seed: int, *keys):
    """A generator seeded by the verdict seed and any labels (strings hashed stably)."""
    import numpy as np

    ints = [k if isinstance(k, int) else zlib.crc32(str(k).encode()) for k in keys]
    return np.random.default_rng([seed, *ints])


def late_mean(iters, expl, iterations: int, fraction: float) -> float:
    """Mean recorded exploitability over the last ``fraction`` of the rounds."""
    import numpy as np

    iters, expl = np.asarray(iters), np.asarray(expl)
    return float(expl[iters >= (1.0 - fraction) * iterations].mean())


def _run_record(res, r: int, iterations: int, fraction: float) -> dict:
    """What is kept of run ``r`` of a batch (its curves, late means, last iterate)."""
    rec = {"iters": res.iters.tolist(), "expl": res.expl[r].tolist(),
           "late_mean": late_mean(res.iters, res.expl[r], iterations, fraction),
           "last": float(res.expl[r, -1])}
    if res.avg_expl is not None:
        rec["avg_expl"] = res.avg_expl[r].tolist()
        rec["avg_late_mean"] = late_mean(res.iters, res.avg_expl[r], iterations, fraction)
    return rec


def _openspiel_last(game, sf, res, r: int, rec: dict) -> None:
    """OpenSpiel's exploitability of run ``r``'s last iterate, and its distance to ours."""
    from .seqform import openspiel_exploitability

    rec["last_openspiel"] = openspiel_exploitability(game, sf, (res.pis[0][:, r], res.pis[1][:, r]))
    rec["last_abs_diff"] = abs(rec["last_openspiel"] - rec["last"])


def grid_runs(sf, games: dict, name: str, gp, tp, seeds: list[int], bar) -> dict:
    """Every variant x (regularized, unregularized) x step x seed x init on one game, one batch
    per variant; per seed, the kept step of each (variant, kind). ``games`` maps each seed to
    its pyspiel game (OpenSpiel's exploitability of the kept last iterates).
    Returns ``{seed: {"tau", "iterations", variant: {kind: {...}}}}``."""
    import numpy as np

    from . import algorithms as al

    out: dict = {s: {"tau": gp.tau, "iterations": gp.iterations} for s in seeds}
    for variant in VARIANTS:
        rows = [(kind, tau, eta, s, i)
                for kind, tau in (("reg", gp.tau), ("unreg", 0.0))
                for eta in getattr(gp.steps, variant)
                for s in seeds for i in range(gp.inits)]
        res = al.run_batch(sf, variant, [r[1] for r in rows], [r[2] for r in rows], gp.iterations,
                           [rng_for(s, name, "init", i) for _, _, _, s, i in rows],
                           floor=tp.floor, init_scale=tp.init_scale, eval_every=gp.eval_every,
                           average=True, progress=bar)
        recs = [_run_record(res, r, gp.iterations, tp.last_fraction) for r in range(len(rows))]
        for s in seeds:
            out[s][variant] = {}
            for kind, tau in (("reg", gp.tau), ("unreg", 0.0)):
                by_step = {eta: [r for r, row in enumerate(rows) if row[0] == kind and row[2] == eta
                                 and row[3] == s] for eta in getattr(gp.steps, variant)}
                score = {eta: float(np.mean([recs[r]["late_mean"] for r in idx])) for eta, idx in by_step.items()}
                best = min(score, key=score.get)
                kept = []
                for r in by_step[best]:
                    _openspiel_last(games[s], sf, res, r, recs[r])
                    kept.append(recs[r])
                out[s][variant][kind] = {"tau": tau, "step": best, "grid": {repr(k): v for k, v in score.items()},
                                         "runs": kept,
                                         "max_last_abs_diff": max(r["last_abs_diff"] for r in kept)}
    return out


def sampled_runs(sf, game, sp, tp, seeds: list[int], bar) -> dict:
    """Per variant: every step of the grid with sampled gradients, every seed in one batch (each
    seed's initial policy and episodes from its generator); the step kept per seed; then, from
    the same initial policies with the kept steps, the exact-gradient control."""
    from . import algorithms as al

    out: dict = {s: {"game": sp.game, "tau": sp.tau, "episodes": sp.episodes, "iterations": sp.iterations}
                 for s in seeds}
    for variant in VARIANTS:
        rows = [(eta, s) for eta in getattr(sp.steps, variant) for s in seeds]
        res = al.run_batch(sf, variant, sp.tau, [eta for eta, _ in rows], sp.iterations,
                           [rng_for(s, sp.game, "sampled") for _, s in rows], floor=tp.floor,
                           init_scale=tp.init_scale, eval_every=sp.eval_every, episodes=sp.episodes,
                           progress=bar)
        recs = [_run_record(res, r, sp.iterations, tp.last_fraction) for r in range(len(rows))]
        best = {}
        for s in seeds:
            mine = [r for r, row in enumerate(rows) if row[1] == s]
            best[s] = min(mine, key=lambda r: recs[r]["late_mean"])
            _openspiel_last(game, sf, res, best[s], recs[best[s]])
        exact = al.run_batch(sf, variant, sp.tau, [rows[best[s]][0] for s in seeds], sp.iterations,
                             [rng_for(s, sp.game, "sampled") for s in seeds], floor=tp.floor,
                             init_scale=tp.init_scale, eval_every=sp.eval_every, progress=bar)
        for j, s in enumerate(seeds):
            ctl = _run_record(exact, j, sp.iterations, tp.last_fraction)
            _openspiel_last(game, sf, exact, j, ctl)
            mine = [r for r, row in enumerate(rows) if row[1] == s]
            out[s][variant] = {"step": rows[best[s]][0], **recs[best[s]],
                               "grid": {repr(rows[r][0]): recs[r]["late_mean"] for r in mine},
                               "exact_control": {k: ctl[k] for k in ("iters", "expl", "late_mean", "last_openspiel")}}
    return out


def rate_sweep(sf, rp, tp, seeds: list[int], bar) -> dict:
    """Rounds until the last iterate's exploitability first reaches epsilon, tau = c * epsilon:
    per variant one batch of every seed x start x epsilon (a start's initial policy is the same
    for every epsilon). Returns ``{seed: {..., "variants": {v: {"step", "iterations": [start][eps]}}}}``."""
    from . import algorithms as al

    out: dict = {s: {"game": rp.game, "epsilons": list(rp.epsilons), "tau_over_epsilon": rp.tau_over_epsilon,
                     "max_iterations": rp.max_iterations, "variants": {}} for s in seeds}
    rows = [(s, k, eps) for s in seeds for k in range(rp.starts) for eps in rp.epsilons]
    for variant in rp.variants:
        eta = getattr(rp.steps, variant)
        hit = al.rounds_to_target(sf, variant, [rp.tau_over_epsilon * e for _, _, e in rows], eta,
                                  [e for _, _, e in rows], rp.max_iterations,
                                  [rng_for(s, "rate", k) for s, k, _ in rows], floor=tp.floor,
                                  init_scale=tp.init_scale, progress=bar)
        for s in seeds:
            table = [[None if hit[r] < 0 else int(hit[r]) for r, row in enumerate(rows) if row[:2] == (s, k)]
                     for k in range(rp.starts)]
            out[s]["variants"][variant] = {"step": eta, "iterations": table}
    return out


def train_all(sfs: dict, pygames: dict, random_games: dict, tp, seeds: list[int], bar_for) -> tuple[dict, dict, dict]:
    """Every run of the train stage for the verdict seeds ``seeds``: ``sfs`` / ``pygames`` hold
    the sequence forms / pyspiel games of Kuhn and Leduc, ``random_games`` maps each seed to
    ``{name: (sequence form, pyspiel game)}`` (its own random EFGs), ``bar_for(desc, total)`` makes
    a progress bar. Returns (per-seed runs, CFR+ curves, seconds per part)."""
    from .baseline import cfr_plus

    per_seed: dict = {s: {"games": {}} for s in seeds}
    timing: dict = {}

    def grid_size(gp, n_seeds: int) -> int:
        return 2 * gp.inits * n_seeds * sum(len(getattr(gp.steps, v)) for v in VARIANTS) * gp.iterations

    for name in ("kuhn_poker", "leduc_poker"):
        gp = getattr(tp, name)
        t0 = time.perf_counter()
        with bar_for(f"{name} PG, seeds {seeds}", grid_size(gp, len(seeds))) as bar:
            res = grid_runs(sfs[name], {s: pygames[name] for s in seeds}, name, gp, tp, seeds, bar)
        for s in seeds:
            per_seed[s]["games"][name] = res[s]
        timing[name] = time.perf_counter() - t0

    t0 = time.perf_counter()
    gp = tp.random
    n_random = sum(len(g) for g in random_games.values())
    with bar_for(f"random EFGs PG, seeds {seeds}", grid_size(gp, 1) * n_random) as bar:
        for s in seeds:                       # each seed its own games: one batch per game
            for name, (sf, game) in random_games[s].items():
                per_seed[s]["games"][name] = grid_runs(sf, {s: game}, name, gp, tp, [s], bar)[s]
    timing["random"] = time.perf_counter() - t0

    sp = tp.sampled
    t0 = time.perf_counter()
    n_sampled = sum(len(getattr(sp.steps, v)) + 1 for v in VARIANTS) * sp.iterations * len(seeds)
    with bar_for(f"{sp.game} sampled, seeds {seeds}", n_sampled) as bar:
        res = sampled_runs(sfs[sp.game], pygames[sp.game], sp, tp, seeds, bar)
    for s in seeds:
        per_seed[s]["sampled"] = res[s]
    timing["sampled"] = time.perf_counter() - t0

    rp = tp.rate
    t0 = time.perf_counter()
    with bar_for(f"iterations to epsilon, seeds {seeds}", None) as bar:
        res = rate_sweep(sfs[rp.game], rp, tp, seeds, bar)
    for s in seeds:
        per_seed[s]["rate"] = res[s]
    timing["rate"] = time.perf_counter() - t0

    # CFR+ is deterministic: once per game (the random games: each seed's)
    t0 = time.perf_counter()
    cfr: dict = {"shared": {}, "per_seed": {str(s): {} for s in seeds}}
    for name in ("kuhn_poker", "leduc_poker"):
        cfr["shared"][name] = cfr_plus(pygames[name], getattr(tp.cfr_plus, name), tp.cfr_plus.checkpoints)
        print(f"  CFR+ {name}: {getattr(tp.cfr_plus, name)} iterations, average-policy exploitability "
              f"{cfr['shared'][name]['average'][-1]:.2e}", flush=True)
    for s in seeds:
        for name, (_, game) in random_games[s].items():
            cfr["per_seed"][str(s)][name] = cfr_plus(game, tp.cfr_plus.random, tp.cfr_plus.checkpoints)
    timing["cfr_plus"] = time.perf_counter() - t0
    return per_seed, cfr, timing


def tqdm_bar(desc: str, total: int | None):
    """The stage's progress bar: a line at least every 10 s while runs advance."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="run-round", mininterval=2.0, miniters=1, unit_scale=True)


def main() -> None:
    with stage("efg_altpg", "train", EfgAltPGParams) as ctx:
        import pyspiel  # noqa: F401 - fail early if OpenSpiel is missing

        from stages.common.device import limit_threads
        from stages.common.io import write_json

        from .seqform import SequenceForm

        limit_threads()
        p, seeds = ctx.params, ctx.seeds
        tp = p.train
        games_dir = ctx.path(GAMES)
        fixed = ["kuhn_poker", "leduc_poker"]
        rnd = random_game_names(p.prepare.random.count)
        need = [(n, None) for n in fixed] + [(n, s) for s in seeds for n in rnd]
        missing = [f"{n}" + (f" (seed {s})" if s is not None else "") for n, s in need
                   if not (game_dir(games_dir, n, s if s is not None else 0) / f"{n}.npz").exists()]
        if missing:
            fail(f"{GAMES}: no sequence form for {missing} (prepared for other seeds?); "
                 "run `dvc repro stages/efg_altpg/dvc.yaml:efg_altpg-prepare`")
        sfs = {n: SequenceForm.load(games_dir / f"{n}.npz") for n in fixed}
        pygames = {n: load_game(games_dir, n) for n in fixed}
        random_games = {s: {n: (SequenceForm.load(game_dir(games_dir, n, s) / f"{n}.npz"),
                                load_game(game_dir(games_dir, n, s), n)) for n in rnd} for s in seeds}
        per_seed, cfr, timing = train_all(sfs, pygames, random_games, tp, seeds, tqdm_bar)

        write_json(ctx.path(RUNS), {"seeds": list(seeds), "per_seed": {str(s): per_seed[s] for s in seeds},
                                    "cfr_plus": cfr})
        summary: dict = {"seconds": timing, "seeds": list(seeds),
                         "cfr_plus_solve_s": {k: c["solve_s"] for k, c in cfr["shared"].items()}, "games": {}}
        for name in fixed:
            summary["games"][name] = {}
            for v in VARIANTS:
                summary["games"][name][v] = {}
                for k in ("reg", "unreg"):
                    kept = {s: per_seed[s]["games"][name][v][k] for s in seeds}
                    summary["games"][name][v][k] = {
                        "step": {str(s): kept[s]["step"] for s in seeds},
                        "late_mean": {str(s): float(sum(r["late_mean"] for r in kept[s]["runs"]) / len(kept[s]["runs"]))
                                      for s in seeds},
                        "last_openspiel_max": {str(s): max(r["last_openspiel"] for r in kept[s]["runs"]) for s in seeds}}
                s_ = summary["games"][name][v]
                print(f"  {name} {v}: regularized late mean by seed "
                      f"{[round(x, 4) for x in s_['reg']['late_mean'].values()]}, unregularized "
                      f"{[round(x, 4) for x in s_['unreg']['late_mean'].values()]}", flush=True)
        print("  seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in timing.items()), flush=True)
        write_json(ctx.path(TRAIN_REPORT), summary)


if __name__ == "__main__":
    main()
