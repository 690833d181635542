"""mairl_entropy calibration, on calibration seeds only (>= 1000, never a verdict seed): the
settings of the headline check (the learner's QRE of the recovered reward against the expert's
policy) and of its control (the same at a temperature ``tau_control`` too weak for uniqueness).

    nice -n 10 python -m benchmarks.mairl_entropy.calibration [--seeds 1000,...] [--taus 1,0.25,0.1,0.05]
                                                             [--ns 1000,10000,100000] [--threshold 0.1]

For every tau in ``--taus`` (the study's tau first, then candidate control temperatures) and
every seed: the games of the seed (the default profile's sizes), the QRE from uniform and from the
uniqueness check's random starts (largest pairwise distance, converged fraction), then for every
n in ``--ns`` the transfer experiment (train.transfer: demonstration sets, the matched recovered
reward, the learner's QRE from random starts): the largest distance of a learner's policy from
the expert's, how many games had a learner end at another equilibrium than the estimate, and the
CPU seconds. Each per-seed figure is judged as the ledger judges the claim (``judge``, rule
every_seed, ``<= --threshold``). Then, for the budget, the whole per-seed train of the default
profile (train.run_seed) for each seed, in CPU seconds.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds, two taus, one n.
"""
from __future__ import annotations

import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def stream(seed: int, part: str):
    """The generator the train stage gives ``part`` of ``seed`` (its SeedSequence of seed and the part's stream)."""
    import numpy as np

    from stages.mairl_entropy import train as T

    return np.random.default_rng(np.random.SeedSequence([seed, T.STREAMS[part]]))

def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--taus", default="1.0,0.25,0.1,0.05", help="the study's tau first, then control candidates")
    ap.add_argument("--ns", default="1000,10000,100000", help="demonstrations per set")
    ap.add_argument("--threshold", type=float, default=0.1, help="the check's threshold (claims.yaml)")
    ap.add_argument("--no-budget", action="store_true", help="skip the timing of the whole per-seed train")
    a, seeds = parse_seeds(ap, taus="1.0,0.1", ns="1000")
    taus = [float(t) for t in a.taus.split(",")]
    ns = [int(n) for n in a.ns.split(",")]

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.common.runtime.params import load_study
    from stages.mairl_entropy import games as G
    from stages.mairl_entropy import train as T
    from stages.mairl_entropy.params import PARAMS

    limit_threads()
    _, p = load_study("mairl_entropy", PARAMS, profile=a.profile)
    pp, tp = p.prepare, p.train
    solver = tp.solver.model_dump()
    radius = tp.uniqueness.distinct_radius

    def quiet(x, **_):
        return x

    games = {s: G.games_from(G.generate(s, pp.n_games, pp.n_states, tuple(pp.n_actions), pp.gamma, pp.reward_low,
                                        pp.reward_high, pp.transition_concentration, pp.stake_low, pp.stake_high))
             for s in seeds}
    tr = tp.transfer
    print(f"profile {a.profile}: {pp.n_games} games per seed, {pp.n_states} states, actions {pp.n_actions}; "
          f"uniqueness {tp.uniqueness.n_starts} + 1 starts; transfer {tr.repetitions} sets x "
          f"{tr.learner_starts} learner starts per game; calibration seeds {seeds}; check: every seed's "
          f"largest distance <= {a.threshold}", flush=True)
    for tau in taus:
        print(f"\n== tau {tau:g}", flush=True)
        dist = {n: [] for n in ns}
        for s in seeds:
            t0 = time.process_time()
            u = T.uniqueness(games[s], tau, tp.uniqueness, solver, stream(s, "uniqueness"), quiet)
            pis = [(np.array(g["pi1"]), np.array(g["pi2"])) for g in u["games"]]
            mpd = max(g["max_pairwise_distance"] for g in u["games"])
            conv = min(g["converged_fraction"] for g in u["games"])
            line = (f"  seed {s}: QRE max pairwise distance {mpd:.1e}, starts converged >= {conv:.2f} "
                    f"({time.process_time() - t0:.1f} s)")
            for n in ns:
                t0 = time.process_time()
                t = T.transfer(games[s], pis, tau, tr.model_copy(update={"n": n}), tp.recovery.smoothing, radius,
                               solver, stream(s, "transfer"), quiet)
                d = max(g["max_distance"] for g in t["games"])
                dist[n].append(d)
                line += (f"; n={n}: distance {d:.3f} (estimate {max(g['max_estimate_error'] for g in t['games']):.3f},"
                         f" {sum(g['runs_elsewhere'] > 0 for g in t['games'])} games elsewhere, learners "
                         f"converged >= {min(g['converged_fraction'] for g in t['games']):.2f}, "
                         f"{time.process_time() - t0:.1f} s)")
            print(line, flush=True)
        for n in ns:
            j = judge(dist[n], "<=", a.threshold, "every_seed")
            print(f"  n={n}: per seed [{', '.join(f'{x:.3f}' for x in dist[n])}] -> {j.verdict}", flush=True)
    if a.no_budget:
        return
    print(f"\nbudget: the whole per-seed train of the {a.profile} profile (train.run_seed), CPU seconds", flush=True)
    total = 0.0
    for s in seeds:
        t0 = time.process_time()
        _, _, times = T.run_seed(s, games[s], tp, quiet)
        cpu = time.process_time() - t0
        total += cpu
        print(f"  seed {s}: {cpu:.1f} s ({', '.join(f'{k} {v:.1f}' for k, v in times.items())})", flush=True)
    print(f"  all {len(seeds)} seeds: {total:.1f} CPU s", flush=True)


if __name__ == "__main__":
    main()
