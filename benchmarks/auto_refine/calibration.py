"""Calibration of auto_refine: steps/s of GRPO and the must checks at candidate sizes.

python benchmarks/auto_refine_calibration.py [steps] [n_distractors] [k]"""
import sys
import time

import numpy as np
import torch

from stages.auto_refine.refine import build_env, evaluate_policy, make_kb, split_questions, train_policy


def main() -> None:
    torch.set_num_threads(1)
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    nd = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    rng = np.random.default_rng(seed)
    docs = make_kb(80, 12, nd, rng)
    train_q, test_q = split_questions(80, 0.25, rng)
    t = time.process_time()
    env = build_env(docs, k, train_q + test_q)
    print(f"env {time.process_time() - t:.2f}s cpu, {len(docs)} docs")
    for name, proto, rr in (("refine", "refine", 0.1), ("refine_noret", "refine", 0.0), ("norefine", "norefine", 0.0)):
        t = time.process_time()
        pol = train_policy(env, train_q, proto, rr, hidden=32, sft_rounds=5, steps=steps, batch=16, group=8,
                           lr=3e-3, clip=0.2, seed=seed)
        dt = time.process_time() - t
        m = evaluate_policy(pol, env, test_q, proto)
        print(f"{name:13s} {dt:.1f}s cpu ({steps / dt:.0f} steps/s)", {a: round(b, 3) if b is not None else None for a, b in m.items()})


if __name__ == "__main__":
    main()
