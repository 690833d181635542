"""mairl_entropy seeds as an axis: the QRE solves of the train stage, the seeds' games one after
another (what the stage does: one solver batch per game, holding its starts) against a seed
dimension (every seed's games stacked in one solver batch, qre.stack_games), on calibration
seeds only (>= 1000).

    nice -n 10 python -m benchmarks.mairl_entropy.seeds [--seeds 1000,1001,1002,1003,1004] [--repeats 3]

For tau and tau_control of the profile it times (CPU seconds, best of ``--repeats``) the two
solves that dominate the train stage's seed-dependent work, on the same pre-drawn starts:
the uniqueness check (uniform + n_starts random starts per game) and the transfer's learner
(repetitions x learner_starts runs per game of the matched recovered reward); it prints the
stacked / one-after-another ratio and the largest difference between the two in probability
(the solver stops when its slowest member converges, so a member's last digits depend on its
batch). ``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two
seeds, one repeat.
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1000,1001,1002,1003,1004")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # the smoke profile's sizes; options given explicitly still win
        ap.set_defaults(seeds="1000,1001", profile="smoke", repeats=1)
        a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        raise SystemExit("benchmarks use calibration seeds (>= 1000) only")

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.mairl_entropy import games as G
    from stages.mairl_entropy import qre
    from stages.mairl_entropy import recovery as rec
    from stages.mairl_entropy.params import PARAMS

    limit_threads()
    _, p = load_study("mairl_entropy", PARAMS, profile=a.profile)
    pp, tp = p.prepare, p.train
    solver = tp.solver.model_dump()
    games = [g for s in seeds for g in G.games_from(G.generate(
        s, pp.n_games, pp.n_states, tuple(pp.n_actions), pp.gamma, pp.reward_low, pp.reward_high,
        pp.transition_concentration, pp.stake_low, pp.stake_high))]
    rng = np.random.default_rng([seeds[0], 99])
    u, tr = tp.uniqueness, tp.transfer
    print(f"profile {a.profile}: {len(seeds)} seeds x {pp.n_games} games, {pp.n_states} states; CPU seconds, "
          f"best of {a.repeats}", flush=True)

    def best(fn):
        out, times = None, []
        for _ in range(a.repeats):
            t0 = time.process_time()
            out = fn()
            times.append(time.process_time() - t0)
        return min(times), out

    for tau in (tp.tau, tp.tau_control):
        # the uniqueness solve: uniform + random starts, the games' own rewards
        starts = []
        for g in games:
            s1, s2 = qre.random_policies(g, u.n_starts, rng, u.start_concentration)
            u1, u2 = qre.uniform_policies(g)
            starts.append((np.concatenate([u1, s1]), np.concatenate([u2, s2])))
        experts = [qre.solve_qre(g, tau, *st, **solver) for g, st in zip(games, starts)]
        # the transfer's learner: the matched recovered reward of each demonstration set
        learner = []
        for g, e in zip(games, experts):
            pi1, pi2 = e.pi1[0], e.pi2[0]
            h1, h2 = rec.estimate_policies(rec.sample_counts(rng, g, pi1, pi2, tr.n, tr.repetitions, "generative"), 0.5)
            R = np.repeat(rec.matched_reward(g, tau, pi1, pi2, h1, h2), tr.learner_starts, axis=0)
            learner.append((R, qre.random_policies(g, R.shape[0], rng, tr.start_concentration)))
        cases = {"uniqueness": [(g, None, st) for g, st in zip(games, starts)],
                 "transfer learner": [(g, R, st) for g, (R, st) in zip(games, learner)]}
        for name, items in cases.items():
            def sequential():
                return [qre.solve_qre(g, tau, *st, R=R, **solver) for g, R, st in items]

            def stacked():
                sizes = [st[0].shape[0] for _, _, st in items]
                big = qre.stack_games([g for g, _, _ in items], sizes)
                R = None if items[0][1] is None else np.concatenate([R for _, R, _ in items])
                s1 = np.concatenate([st[0] for _, _, st in items])
                s2 = np.concatenate([st[1] for _, _, st in items])
                return qre.solve_qre(big, tau, s1, s2, R=R, **solver), sizes

            t_seq, seq = best(sequential)
            t_stk, (stk, sizes) = best(stacked)
            cut = np.cumsum([0, *sizes])
            diff = max(float(max(np.abs(stk.pi1[cut[k]:cut[k + 1]] - r.pi1).max(),
                                 np.abs(stk.pi2[cut[k]:cut[k + 1]] - r.pi2).max())) for k, r in enumerate(seq))
            iters = max(r.iterations for r in seq)
            print(f"  tau {tau:g}, {name} ({cut[-1]} runs): one game after another {t_seq:.2f} s (at most {iters} "
                  f"steps a game), all seeds stacked {t_stk:.2f} s ({stk.iterations} steps): ratio stacked / "
                  f"sequential {t_stk / t_seq:.2f}; largest difference {diff:.1e}", flush=True)


if __name__ == "__main__":
    main()
