"""Calibration of auto_refine: steps/s of GRPO and the must checks at candidate sizes.

python benchmarks/auto_refine/calibration.py [steps] [n_distractors] [k]

``--smoke`` runs it at tiny sizes in seconds (what CI runs)."""
import argparse
import time

import numpy as np

from stages.auto_refine.refine import build_env, evaluate_policy, make_kb, split_questions, train_policy
from stages.common.device import limit_threads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("steps", type=int, nargs="?", default=100)
    ap.add_argument("n_distractors", type=int, nargs="?", default=3)
    ap.add_argument("k", type=int, nargs="?", default=3)
    ap.add_argument("seed", type=int, nargs="?", default=0)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    args = ap.parse_args()
    limit_threads(1)
    steps, nd, k, seed = (2 if args.smoke else args.steps), args.n_distractors, args.k, args.seed
    rng = np.random.default_rng(seed)
    docs = make_kb(80, 12, nd, rng)
    train_q, test_q = split_questions(80, 0.25, rng)
    t = time.process_time()
    env = build_env(docs, k, train_q + test_q)
    print(f"env {time.process_time() - t:.2f}s cpu, {len(docs)} docs")
    for name, proto, rr in (("refine", "refine", 0.1), ("refine_noret", "refine", 0.0), ("norefine", "norefine", 0.0)):
        t = time.process_time()
        pol = train_policy(env, train_q, proto, rr, hidden=32, sft_rounds=1 if args.smoke else 5, steps=steps,
                           batch=16, group=8, lr=3e-3, clip=0.2, seed=seed)
        dt = time.process_time() - t
        m = evaluate_policy(pol, env, test_q, proto)
        print(f"{name:13s} {dt:.1f}s cpu ({steps / dt:.0f} steps/s)", {a: round(b, 3) if b is not None else None for a, b in m.items()})


if __name__ == "__main__":
    main()
