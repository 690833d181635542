"""nac_b: J* by our relative value iteration against the HiGHS LP, in one run.

    python benchmarks/nac_b/gain.py [--sizes 6,10,40,120] [--actions 2] [--repeats 5]
    --smoke runs it at tiny sizes in seconds (what CI runs).

The prepare stage computes J* both ways (HiGHS via scipy.optimize.linprog(method="highs") on the
average-reward LP is the reference; RVI on the aperiodicity transform is the cross-check that also
gives a gain-optimal policy for transient states). On periodic unichain MDPs from the study's
generator this prints, per size, both times (best of --repeats), the ratio LP / RVI and the
largest |J*_LP - J*_RVI|.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks.bench import best_of  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="6,10,40,120", help="states per MDP (2 transient, period 2)")
    ap.add_argument("--actions", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.sizes, a.repeats = "6,10", 1
        print("smoke: sizes 6,10, one repeat (figures meaningless)")
    import numpy as np

    from stages.nac_b.mdp import make_periodic_unichain, optimal_gain_lp, relative_value_iteration

    optimal_gain_lp(*[np.ones((1, 1, 1)), np.zeros((1, 1))])           # import scipy / HiGHS once
    worst = 0.0
    print(f"best of {a.repeats}; HiGHS LP (scipy linprog) vs our RVI (tau = 0.5, tol 1e-12)")
    for S in (int(x) for x in a.sizes.split(",")):
        per_phase = max(1, (S - 2) // 2)
        m = make_periodic_unichain(np.random.default_rng(S), 2, 2, per_phase, a.actions, 1.0, 0.5, 0.0, 1.0)
        t_lp, (j_lp, _) = best_of(lambda: optimal_gain_lp(m.P, m.r), a.repeats)
        t_rvi, rvi = best_of(lambda: relative_value_iteration(m.P, m.r, tau=0.5, tol=1e-12), a.repeats)
        diff = abs(j_lp - rvi.gain)
        worst = max(worst, diff)
        print(f"S={m.n_states:4d} A={a.actions}: LP {t_lp * 1e3:8.2f} ms, RVI {t_rvi * 1e3:8.2f} ms "
              f"({rvi.iterations} it); LP / RVI = {t_lp / t_rvi:6.2f}x; |J*_LP - J*_RVI| = {diff:.2e}")
    print(f"max |J*_LP - J*_RVI| = {worst:.2e}")


if __name__ == "__main__":
    main()
