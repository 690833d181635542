"""mairl_entropy train: QREs, their uniqueness, the library cross-checks, the ambiguity example
and the reward-recovery sweep.

Reads ``data/mairl_entropy/games.npz``; writes ``data/mairl_entropy/results.json`` (every figure
evaluate reads, with the library comparisons), ``data/mairl_entropy/sweep.npz`` (the recovery
errors ``[game, n, repetition]``) and ``reports/mairl_entropy/train.json`` (timings, headline
figures). Each part draws from its own seeded stream (``SeedSequence([common.seed, part])``).
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import stage

from .params import MairlParams
from .paths import GAMES, RESULTS, SWEEP, TRAIN_METRICS

STREAMS = {"uniqueness": 1, "tau_sweep": 2, "verify": 3, "ambiguity": 4, "recovery": 5}


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
    for gi, (g, (pi1, pi2)) in enumerate(tqdm(list(zip(games, pis)), desc="reward recovery")):
        counts = np.concatenate([rec.sample_counts(rng, g, pi1, pi2, int(n), rp.repetitions, rp.sampling)
                                 for n in ns])
        e = rec.recovery_errors(g, tau, pi1, pi2, counts, rp.smoothing, solver)
        converged &= bool(e["converged"].all())
        for k in keys:
            arrays[k][gi] = e[k].reshape(len(ns), rp.repetitions)
    return ns, arrays, converged


def main() -> None:
    with stage("mairl_entropy", "train", MairlParams) as ctx:
        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz

        from . import games as G

        limit_threads()
        p = ctx.params.train
        solver = p.solver.model_dump()
        data = G.load(ctx.path(GAMES))
        games = G.games_from(data)
        times = {}

        t0 = time.perf_counter()
        uniq = uniqueness(games, p.tau, p.uniqueness, solver, _rng(ctx.seed, "uniqueness"), tqdm)
        times["uniqueness_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sweep_tau = tau_sweep(games, p.uniqueness, solver, _rng(ctx.seed, "tau_sweep"), tqdm)
        times["tau_sweep_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        ver = verify(p.verify, solver, _rng(ctx.seed, "verify"), tqdm)
        times["verify_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        amb = ambiguity(data, p.ambiguity, solver, _rng(ctx.seed, "ambiguity"), tqdm)
        times["ambiguity_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        pis = [(np.array(r["pi1"]), np.array(r["pi2"])) for r in uniq["games"]]
        ns, arrays, rec_conv = recovery(games, pis, p.tau, p.recovery, solver, _rng(ctx.seed, "recovery"), tqdm)
        times["recovery_s"] = time.perf_counter() - t0

        write_npz(ctx.path(SWEEP), {"n": ns, **arrays})
        results = {"tau": p.tau, "gamma": float(data["gamma"]), "uniqueness": uniq, "tau_sweep": sweep_tau,
                   "verify": ver, "ambiguity": amb,
                   "recovery": {"sampling": p.recovery.sampling, "smoothing": p.recovery.smoothing,
                                "repetitions": p.recovery.repetitions, "n": ns.tolist(),
                                "all_converged": rec_conv,
                                "max_rationalised": float(arrays["rationalised"].max())}}
        write_json(ctx.path(RESULTS), results)
        summary = {
            **{k: round(v, 3) for k, v in times.items()},
            "qre_max_pairwise_distance": max(g["max_pairwise_distance"] for g in uniq["games"]),
            "qre_converged_fraction": min(g["converged_fraction"] for g in uniq["games"]),
            "scipy_root_max_diff": max(g["scipy_root_max_diff"] for g in uniq["games"]),
            "recovery_all_converged": rec_conv,
        }
        write_json(ctx.path(TRAIN_METRICS), summary)
        ctx.run.log_curve("recovery.reward_error_mean", arrays["reward_error"].mean(axis=(0, 2)).tolist(),
                          ns.tolist())
        print("  " + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                               for k, v in summary.items()), flush=True)


if __name__ == "__main__":
    main()
