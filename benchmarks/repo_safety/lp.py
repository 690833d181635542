"""repo_safety: the per-prompt-constrained optimum by HiGHS against our pair enumeration, in one run.

    python benchmarks/repo_safety/lp.py [--sizes 200x8,1000x8,200x32] [--repeats 5]
    --smoke runs it at tiny sizes in seconds (what CI runs).

The train stage solves the LP  max mean_x E_pi reward  s.t.  E_pi cost(x) <= 0 for every prompt  with
HiGHS (scipy.optimize.linprog(method="highs"), one sparse LP over all prompts: the reference the
claims read) and cross-checks it with our own solver (stages/repo_safety/optimum.py lp_pairs: each
prompt's optimum mixes at most two responses, so all K^2 pairs are enumerated with numpy). On
instances from the study's generator (its params file's default profile, harmful share 0.2, resized)
this prints, per size, both times (best of
--repeats), the ratio HiGHS / pairs, and the largest helpfulness difference.
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
    ap.add_argument("--sizes", default="200x8,1000x8,200x32", help="prompts x responses")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.sizes, a.repeats = "20x4,10x8", 1
        print("smoke: sizes 20x4,10x8, one repeat (figures meaningless)")
    import numpy as np

    from stages.common.runtime.params import load_study, read_params
    from stages.repo_safety.bandit import generate
    from stages.repo_safety.optimum import lp_highs, lp_pairs
    from stages.repo_safety.params import RepoSafetyParams

    _, params = load_study("repo_safety", RepoSafetyParams, read_params(REPO, ["repo_safety"]), profile="default")

    worst = 0.0
    print(f"best of {a.repeats}; HiGHS LP (scipy linprog) vs our pair enumeration (numpy)")
    for size in a.sizes.split(","):
        n, k = (int(v) for v in size.split("x"))
        p = params.prepare.model_copy(update={"n_prompts": n, "n_responses": k})
        inst = generate(np.random.default_rng([0, n, k]), p, 0.2)
        lp_highs(inst.reward[:2], inst.cost[:2], 0.0)                      # import scipy / HiGHS once
        t_h, (_, v_h, _) = best_of(lambda: lp_highs(inst.reward, inst.cost, 0.0), a.repeats)
        t_p, (_, v_p) = best_of(lambda: lp_pairs(inst.reward, inst.cost, 0.0), a.repeats)
        diff = abs(v_h - v_p)
        worst = max(worst, diff)
        print(f"{n:5d} prompts x {k:2d} responses: HiGHS {t_h * 1e3:8.2f} ms, pairs {t_p * 1e3:8.2f} ms; "
              f"HiGHS / pairs = {t_h / t_p:6.2f}x; |helpfulness difference| = {diff:.2e}")
    print(f"max |helpfulness difference| = {worst:.2e}")


if __name__ == "__main__":
    main()
