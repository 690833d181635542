"""mairl_entropy train: for every verdict seed, its games' QREs and their uniqueness, the
learner's QRE of the recovered reward (transfer), the reward-recovery sweep and the library
cross-checks, each at the study's tau and, for the claims' controls, at ``tau_control``; once,
the ambiguity example.

A verdict seed is one independent repetition of the whole study (its own games, starts and
demonstrations). The seeds run one after another in this process (``run_seeds``); within a seed,
each game's starts, demonstration sets and learner starts are one batch of the QRE solver
(benchmarks/mairl_entropy/seeds.py measures a seed dimension against this). Each part of a seed
draws from its own stream (``SeedSequence([seed, part])``): a seed's figures do not depend on the
other seeds of the profile. The ambiguity example (exact: its figures do not depend on the seed)
runs once, on the first seed's example.

Reads ``data/mairl_entropy/games.npz``; writes ``data/mairl_entropy/results.json`` (every figure
evaluate reads: ``per_seed`` and the shared ``ambiguity``), ``data/mairl_entropy/sweep.npz`` (the
recovery errors ``s<seed>/<error>[game, n, repetition]`` and ``n``) and
``reports/mairl_entropy/train.json`` (timings, headline figures per seed).
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import stage

from .params import MairlParams
from .paths import GAMES, RESULTS, SWEEP, TRAIN_METRICS

STREAMS = {"uniqueness": 1, "tau_sweep": 2, "verify": 3, "ambiguity": 4, "recovery": 5,
           "uniqueness_control": 6, "transfer": 7, "transfer_control": 8}


def _rng(seed: int, part: str):
    import numpy as np

    return np.random.default_rng(np.random.SeedSequence([seed, STREAMS[part]]))


def uniqueness(games, tau, u, solver, rng, tqdm) -> dict:
    """QRE of each game from ``u.n_starts`` random starts plus uniform: the largest pairwise
    distance, convergence, and the QRE (from uniform) with its checks."""
    import numpy as np

    from . import qre
    from .baselines import qre_by_root

    per_game = []
    for g in tqdm(games, desc=f"QRE uniqueness (tau={tau:g}, {u.n_starts} starts)"):
        s1, s2 = qre.random_policies(g, u.n_starts, rng, u.start_concentration)
        u1, u2 = qre.uniform_policies(g)
        res = qre.solve_qre(g, tau, np.concatenate([u1, s1]), np.concatenate([u2, s2]), **solver)
        pi1, pi2 = res.pi1[:1], res.pi2[:1]
        t0 = time.perf_counter()
        b1, b2, _ = qre_by_root(g, tau)
        root_s = time.perf_counter() - t0
        per_game.append({
            "max_pairwise_distance": qre.max_pairwise_distance(res.pi1, res.pi2),
            "converged_fraction": float(res.converged.mean()),
            "iterations": res.iterations,
            "max_residual": float(res.residual.max()),
            # independent checks of the QRE found from uniform
            "vi_residual": float(qre.fixed_point_residual(g, g.R, pi1, pi2, tau)[0]),
            "regularised_nash_gap": float(qre.nash_gap(g, g.R, pi1, pi2, tau)[0]),
            "scipy_root_max_diff": float(max(np.abs(b1 - pi1[0]).max(), np.abs(b2 - pi2[0]).max())),
            "scipy_root_s": root_s,
            "min_prob": float(min(pi1.min(), pi2.min())),
            "pi1": pi1[0].tolist(), "pi2": pi2[0].tolist(),
        })
    return {"tau": tau, "n_starts": u.n_starts + 1, "games": per_game}


def tau_sweep(games, u, solver, rng, tqdm) -> list[dict]:
    """Context: the uniqueness test at other tau (distinct QREs among converged runs)."""

    from . import qre

    rows = []
    for tau in tqdm(u.tau_sweep, desc="tau sweep"):
        distinct, conv = [], []
        for g in games:
            s1, s2 = qre.random_policies(g, u.n_starts, rng, u.start_concentration)
            res = qre.solve_qre(g, tau, s1, s2, **{**solver, "max_iter": u.sweep_max_iter})
            ok = res.converged
            distinct.append(int(len(qre.distinct(res.pi1[ok], res.pi2[ok], u.distinct_radius))))
            conv.append(float(ok.mean()))
        rows.append({"tau": tau, "distinct_per_game": distinct, "converged_per_game": conv,
                     "games_with_several": int(sum(d > 1 for d in distinct)),
                     "games_not_all_converged": int(sum(c < 1 for c in conv))})
    return rows


def verify(v, solver, rng, tqdm) -> dict:
    """Against known answers: matching pennies' QRE is (1/2, 1/2) for every tau; random 2x2
    general-sum games vs scipy root on the logit equations; n x n zero-sum games vs open_spiel MMD."""
    import numpy as np

    from . import qre
    from .baselines import qre_by_mmd, qre_by_root
    from .games import PENNIES

    mp = qre.matrix_game(PENNIES, -PENNIES)
    pennies = []
    for tau in v.tau_grid:
        s1, s2 = qre.random_policies(mp, v.n_starts, rng, 0.5)
        res = qre.solve_qre(mp, tau, s1, s2, **solver)
        pennies.append(float(max(np.abs(res.pi1 - 0.5).max(), np.abs(res.pi2 - 0.5).max())))
    root_diff, mmd_diff, mmd_gap = [], [], []
    ours_s = root_s = mmd_s = 0.0
    for _ in tqdm(range(v.n_matrix_games), desc="matrix games vs scipy / open_spiel"):
        R1, R2 = rng.uniform(-1, 1, (2, 2)), rng.uniform(-1, 1, (2, 2))
        g = qre.matrix_game(R1, R2)
        for tau in v.tau_grid:
            t0 = time.perf_counter()
            res = qre.solve_qre(g, tau, *qre.uniform_policies(g), **solver)
            ours_s += time.perf_counter() - t0
            t0 = time.perf_counter()
            b1, b2, _ = qre_by_root(g, tau)
            root_s += time.perf_counter() - t0
            root_diff.append(float(max(np.abs(b1 - res.pi1[0]).max(), np.abs(b2 - res.pi2[0]).max())))
        for n in v.zero_sum_actions:
            A = rng.uniform(-1, 1, (n, n))
            g = qre.matrix_game(A, -A)
            for tau in v.tau_grid:
                res = qre.solve_qre(g, tau, *qre.uniform_policies(g), **solver)
                t0 = time.perf_counter()
                x, y, gap = qre_by_mmd(A, tau, v.mmd_iterations)
                mmd_s += time.perf_counter() - t0
                mmd_diff.append(float(max(np.abs(x - res.pi1[0, 0]).max(), np.abs(y - res.pi2[0, 0]).max())))
                mmd_gap.append(gap)
    return {"tau_grid": list(v.tau_grid), "pennies_max_dev": pennies,
            "root_2x2_max_diff": max(root_diff), "mmd_zero_sum_max_diff": max(mmd_diff),
            "mmd_max_gap": max(mmd_gap), "n_root_cases": len(root_diff), "n_mmd_cases": len(mmd_diff),
            "ours_s": ours_s, "root_s": root_s, "mmd_s": mmd_s}


def ambiguity(data, a, solver, rng, tqdm) -> dict:
    """Zero-sum vs identical-interest rewards sharing the Nash equilibrium (uniform play): the
    matrix games and their Markov-game lifts. Nash gaps (tau = 0) at uniform play, the fixed-point
    residual of uniform play at every tau (a shared QRE), and how many QREs random starts find."""
    import numpy as np

    from . import games as G
    from . import qre

    cases = {"matrix": {"zero_sum": qre.matrix_game(G.PENNIES, -G.PENNIES),
                        "identical_interest": qre.matrix_game(G.PENNIES, G.PENNIES)},
             "markov": G.ambiguity_games(data["ambiguity_P"], data["ambiguity_stakes"], float(data["gamma"]))}
    solver = {**solver, "max_iter": a.max_iter}
    out: dict = {}
    for kind, pair in cases.items():
        for name, g in pair.items():
            u1, u2 = qre.uniform_policies(g)
            rows = []
            for tau in a.tau_grid:
                s1, s2 = qre.random_policies(g, a.n_starts, rng, 0.5)
                res = qre.solve_qre(g, tau, s1, s2, **solver)
                ok = res.converged
                found = qre.distinct(res.pi1[ok], res.pi2[ok], 1e-6)
                rows.append({"tau": tau,
                             "uniform_residual": float(qre.fixed_point_residual(g, g.R, u1, u2, tau)[0]),
                             "distinct_qre_found": int(len(found)), "converged": float(ok.mean())})
            out[f"{kind}.{name}"] = {
                "nash_gap_at_uniform": float(qre.nash_gap(g, g.R, u1, u2, 0.0)[0]),
                # a non-equilibrium for contrast: player 1 plays its first action
                "nash_gap_at_pure": float(qre.nash_gap(g, g.R, np.eye(u1.shape[-1])[[0] * u1.shape[1]][None],
                                                       u2, 0.0)[0]),
                **G.nature(g.R), "by_tau": rows}
    # what QRE demonstrations identify: the canonical reward Q_i - V_i at the shared QRE
    from .recovery import normalised_reward

    diff = 0.0
    for pair in cases.values():
        u1, u2 = qre.uniform_policies(pair["zero_sum"])
        for tau in a.tau_grid:
            zs = normalised_reward(pair["zero_sum"], u1[0], u2[0], tau)
            ii = normalised_reward(pair["identical_interest"], u1[0], u2[0], tau)
            diff = max(diff, *(float(np.abs(x - y).max()) for x, y in zip(zs, ii)))
    out["canonical_reward_difference"] = diff
    # the QRE correspondence of the two matrix games, for the plot
    taus = np.geomspace(a.plot_tau[0], a.plot_tau[1], a.plot_points)
    curve = {}
    for name, g in cases["matrix"].items():
        pts = []
        for tau in tqdm(taus, desc=f"QRE correspondence ({name})", leave=False):
            s1, s2 = qre.random_policies(g, a.n_starts, rng, 0.5)
            res = qre.solve_qre(g, float(tau), s1, s2, **solver)
            ok = res.converged
            for k in qre.distinct(res.pi1[ok], res.pi2[ok], 1e-6):
                pts.append([float(tau), float(res.pi1[ok][k, 0, 0]), float(res.pi2[ok][k, 0, 0])])
        curve[name] = pts
    out["correspondence"] = curve
    return out


def recovery(games, pis, tau, rp, solver, rng, tqdm):
    """Errors of the recovered rewards for every game, n and repetition."""
    import numpy as np

    from . import recovery as rec

    ns = rec.n_grid(rp.n_min, rp.n_max, rp.points_per_decade)
    keys = ("reward_error", "value_gap", "nash_gap", "rationalised")
    arrays = {k: np.zeros((len(games), len(ns), rp.repetitions)) for k in keys}
    converged = True
    for gi, (g, (pi1, pi2)) in enumerate(tqdm(list(zip(games, pis)), desc="reward recovery", leave=False)):
        counts = np.concatenate([rec.sample_counts(rng, g, pi1, pi2, int(n), rp.repetitions, rp.sampling)
                                 for n in ns])
        e = rec.recovery_errors(g, tau, pi1, pi2, counts, rp.smoothing, solver)
        converged &= bool(e["converged"].all())
        for k in keys:
            arrays[k][gi] = e[k].reshape(len(ns), rp.repetitions)
    return ns, arrays, converged


def transfer(games, pis, tau, tp, smoothing, radius, solver, rng, tqdm) -> dict:
    """Per game: ``tp.repetitions`` demonstration sets of ``tp.n`` demonstrations of the expert's
    QRE ``pis[g]`` (generative model), the matched recovered reward of each, and the learner's QRE
    of it from ``tp.learner_starts`` random starts per set (recovery.transfer_errors); the largest
    figures over the game's learner runs, and how many runs ended at another equilibrium than the
    set's estimate (further than ``radius``, the uniqueness check's distinct_radius)."""

    from . import qre
    from . import recovery as rec

    rows = []
    for g, (pi1, pi2) in tqdm(list(zip(games, pis)), desc=f"transfer (tau={tau:g})", leave=False):
        counts = rec.sample_counts(rng, g, pi1, pi2, tp.n, tp.repetitions, "generative")
        starts = qre.random_policies(g, tp.repetitions * tp.learner_starts, rng, tp.start_concentration)
        e = rec.transfer_errors(g, tau, pi1, pi2, counts, smoothing, starts, solver)
        rows.append({"max_distance": float(e["distance"].max()),
                     "max_from_estimate": float(e["from_estimate"].max()),
                     "max_value_gap": float(e["value_gap"].max()),
                     "converged_fraction": float(e["converged"].mean()),
                     "max_estimate_error": float(e["estimate_error"].max()),
                     "max_estimate_residual": float(e["estimate_residual"].max()),
                     "runs": int(e["distance"].size), "runs_elsewhere": int((e["from_estimate"] > radius).sum())})
    return {"tau": tau, "n": tp.n, "repetitions": tp.repetitions, "learner_starts": tp.learner_starts,
            "games": rows}


def run_seed(seed: int, games, p, tqdm) -> tuple[dict, dict, dict]:
    """One verdict seed's experiments: (results, sweep arrays, timings)."""
    import numpy as np

    solver = p.solver.model_dump()
    times, out = {}, {}

    def timed(name, fn):
        t0 = time.perf_counter()
        r = fn()
        times[f"{name}_s"] = round(time.perf_counter() - t0, 3)
        return r

    def pis_of(u):
        return [(np.array(r["pi1"]), np.array(r["pi2"])) for r in u["games"]]

    for arm, tau in (("", p.tau), ("_control", p.tau_control)):
        out["uniqueness" + arm] = timed("uniqueness" + arm, lambda: uniqueness(
            games, tau, p.uniqueness, solver, _rng(seed, "uniqueness" + arm), tqdm))
        out["transfer" + arm] = timed("transfer" + arm, lambda: transfer(
            games, pis_of(out["uniqueness" + arm]), tau, p.transfer, p.recovery.smoothing,
            p.uniqueness.distinct_radius, solver,
            _rng(seed, "transfer" + arm), tqdm))
    out["tau_sweep"] = timed("tau_sweep", lambda: tau_sweep(games, p.uniqueness, solver, _rng(seed, "tau_sweep"), tqdm))
    out["verify"] = timed("verify", lambda: verify(p.verify, solver, _rng(seed, "verify"), tqdm))
    ns, arrays, rec_conv = timed("recovery", lambda: recovery(
        games, pis_of(out["uniqueness"]), p.tau, p.recovery, solver, _rng(seed, "recovery"), tqdm))
    out["recovery"] = {"sampling": p.recovery.sampling, "smoothing": p.recovery.smoothing,
                       "repetitions": p.recovery.repetitions, "n": ns.tolist(), "all_converged": rec_conv,
                       "max_rationalised": float(arrays["rationalised"].max())}
    return out, {"n": ns, **arrays}, times


def main() -> None:
    with stage("mairl_entropy", "train", MairlParams) as ctx:
        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz
        from stages.common.seeds import run_seeds

        from . import games as G

        limit_threads()
        p = ctx.params.train
        solver = p.solver.model_dump()

        def one(seed: int):
            data = G.load(ctx.path(GAMES), seed)
            return run_seed(seed, G.games_from(data), p, tqdm)

        ran = run_seeds(ctx.seeds, one)
        first = ctx.seeds[0]
        t0 = time.perf_counter()
        amb = ambiguity(G.load(ctx.path(GAMES), first), p.ambiguity, solver, _rng(first, "ambiguity"), tqdm)
        amb_s = time.perf_counter() - t0

        sweep = {"n": ran[first][1]["n"]}
        for seed, (_, arrays, _) in ran.items():
            sweep.update({G.seed_key(seed, k): v for k, v in arrays.items() if k != "n"})
        write_npz(ctx.path(SWEEP), sweep)
        gamma = float(G.load(ctx.path(GAMES), first)["gamma"])
        write_json(ctx.path(RESULTS), {
            "tau": p.tau, "tau_control": p.tau_control, "gamma": gamma, "seeds": list(ctx.seeds),
            "ambiguity": {"seed": first, **amb},
            "per_seed": {str(s): r for s, (r, _, _) in ran.items()}})
        summary = {"ambiguity_s": round(amb_s, 3), "per_seed": {}}
        for seed, (r, _, times) in ran.items():
            summary["per_seed"][str(seed)] = {
                **times,
                "qre_max_pairwise_distance": max(g["max_pairwise_distance"] for g in r["uniqueness"]["games"]),
                "qre_control_max_pairwise_distance": max(g["max_pairwise_distance"]
                                                         for g in r["uniqueness_control"]["games"]),
                "transfer_max_distance": max(g["max_distance"] for g in r["transfer"]["games"]),
                "transfer_control_max_distance": max(g["max_distance"] for g in r["transfer_control"]["games"]),
                "recovery_all_converged": r["recovery"]["all_converged"]}
            print(f"  seed {seed}: " + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                                                 for k, v in summary["per_seed"][str(seed)].items()), flush=True)
        write_json(ctx.path(TRAIN_METRICS), summary)
        curve = np.mean([a["reward_error"].mean(axis=(0, 2)) for _, a, _ in ran.values()], axis=0)
        ctx.run.log_curve("recovery.reward_error_mean", curve.tolist(), sweep["n"].tolist())


if __name__ == "__main__":
    main()
