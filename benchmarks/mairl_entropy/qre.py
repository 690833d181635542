"""Our QRE solver (damped soft fixed point, stages/mairl_entropy/qre.py) vs the libraries, in one
run: wall time and the largest difference in probability.

    python benchmarks/mairl_entropy/qre.py [--profile default] [--repeats 5]

1. The study's random Markov games (generated in memory from ``mairl_entropy.<profile>.prepare``
   and the calibration seed ``--seed``, >= 1000: never a verdict seed), tau from ``train.tau``,
   one start (uniform): ours vs
   ``scipy.optimize.root`` (hybr) on the logit equations (stages/mairl_entropy/baselines.py).
   Ours is also timed on the batch of 64 random starts the uniqueness check runs, which scipy
   would need 64 separate calls for.
2. Random n x n zero-sum matrix games: ours vs open_spiel's MMD (``mmd_dilated``, 300
   iterations; its own gap is printed too).
Times are the best of ``--repeats`` runs, OMP_NUM_THREADS=1.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile's games, one
repeat, 20 MMD iterations.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("OMP_NUM_THREADS", "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="default", choices=["smoke", "default", "paper"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--mmd-iterations", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1000, help="calibration seed of the games (>= 1000)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.profile, a.repeats, a.mmd_iterations = "smoke", 1, 20
        print("smoke: the smoke profile, one repeat, 20 MMD iterations; the figures mean nothing")
    if a.seed < 1000:
        raise SystemExit("benchmarks use calibration seeds (>= 1000) only")

    import numpy as np

    from benchmarks.bench import best_of
    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.mairl_entropy import games as G
    from stages.mairl_entropy import qre
    from stages.mairl_entropy.baselines import qre_by_mmd, qre_by_root
    from stages.mairl_entropy.params import MairlParams

    limit_threads()
    _, p = load_study("mairl_entropy", MairlParams, profile=a.profile)
    pp, tp = p.prepare, p.train
    games = G.games_from(G.generate(a.seed, pp.n_games, pp.n_states, tuple(pp.n_actions), pp.gamma,
                                    pp.reward_low, pp.reward_high, pp.transition_concentration,
                                    pp.stake_low, pp.stake_high))
    solver = tp.solver.model_dump()
    tau = tp.tau
    qre_by_root(games[0], tau)                       # warm-up: scipy's imports

    def ours():
        return [qre.solve_qre(g, tau, *qre.uniform_policies(g), **solver) for g in games]

    def scipy_root():
        return [qre_by_root(g, tau) for g in games]

    rng = np.random.default_rng(0)
    starts = [qre.random_policies(g, tp.uniqueness.n_starts, rng, tp.uniqueness.start_concentration) for g in games]

    def ours_batch():
        return [qre.solve_qre(g, tau, s1, s2, **solver) for g, (s1, s2) in zip(games, starts)]

    t_ours, r_ours = best_of(ours, a.repeats)
    t_root, r_root = best_of(scipy_root, a.repeats)
    t_batch, _ = best_of(ours_batch, max(1, a.repeats // 2))
    diff = max(max(np.abs(o.pi1[0] - b1).max(), np.abs(o.pi2[0] - b2).max())
               for o, (b1, b2, _) in zip(r_ours, r_root))
    S, A1, A2 = games[0].shape
    print(f"Markov games ({len(games)} games, {S} states, {A1}x{A2} actions, gamma {pp.gamma}, tau {tau:g}), "
          f"one start each:")
    print(f"  ours (damped soft fixed point)      {t_ours * 1e3:8.1f} ms")
    print(f"  scipy.optimize.root (logit eqs.)    {t_root * 1e3:8.1f} ms")
    print(f"  time ratio ours / scipy             {t_ours / t_root:8.2f}")
    print(f"  max |difference| in probability     {diff:8.1e}")
    print(f"  ours on {tp.uniqueness.n_starts} starts per game (one batch)  {t_batch * 1e3:8.1f} ms "
          f"= {t_batch / t_root:.2f} x scipy's single start")

    mrng = np.random.default_rng(1)
    cases = [mrng.uniform(-1, 1, (n, n)) for n in (2, 3) for _ in range(2)]
    taus = [0.5, 1.0, 2.0]

    def ours_zs():
        out = []
        for A in cases:
            g = qre.matrix_game(A, -A)
            out += [qre.solve_qre(g, t, *qre.uniform_policies(g), **solver) for t in taus]
        return out

    def mmd():
        return [qre_by_mmd(A, t, a.mmd_iterations) for A in cases for t in taus]

    t_zs, r_zs = best_of(ours_zs, a.repeats)
    t_mmd, r_mmd = best_of(mmd, max(1, a.repeats // 2))
    diff = max(max(np.abs(o.pi1[0, 0] - x).max(), np.abs(o.pi2[0, 0] - y).max())
               for o, (x, y, _) in zip(r_zs, r_mmd))
    print(f"Zero-sum matrix games ({len(cases)} games 2x2 and 3x3, tau {taus}):")
    print(f"  ours (damped soft fixed point)      {t_zs * 1e3:8.1f} ms")
    print(f"  open_spiel MMD ({a.mmd_iterations} iterations)     {t_mmd * 1e3:8.1f} ms "
          f"(largest MMD gap {max(abs(g) for *_, g in r_mmd):.1e})")
    print(f"  time ratio ours / open_spiel        {t_zs / t_mmd:8.3f}")
    print(f"  max |difference| in probability     {diff:8.1e}")


if __name__ == "__main__":
    main()
