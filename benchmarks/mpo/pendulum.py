"""mpo re-implements gymnasium's Pendulum-v1 as a batched numpy env (stages/mpo/po.BatchPendulum;
tests/mpo/test_po.py checks it step by step against gymnasium). This prints both speeds, in
environment steps per CPU second, and their ratio, measured in one run.

    nice -n 19 python -m benchmarks.mpo.pendulum

``--smoke`` runs it at tiny sizes in seconds (what CI runs): 256 steps instead of 4000.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    import gymnasium as gym

    from stages.mpo.po import BatchPendulum

    n_steps = 256 if a.smoke else 4000
    env = gym.make("Pendulum-v1")
    env.reset(seed=0)
    u = np.array([0.5], dtype=np.float32)
    t0 = time.process_time()
    for i in range(n_steps):
        _, _, term, trunc, _ = env.step(u)
        if term or trunc:
            env.reset(seed=i)
    gym_rate = n_steps / (time.process_time() - t0)
    batch = BatchPendulum(64, np.random.default_rng(0))
    uu = np.full(64, 0.5)
    t0 = time.process_time()
    for _ in range(n_steps // 64 * 4):
        batch.obs()
        batch.step(uu)
    ours = n_steps * 4 / (time.process_time() - t0)
    print(f"gymnasium Pendulum-v1: {gym_rate:,.0f} steps/CPU s; BatchPendulum (64 envs): {ours:,.0f} "
          f"steps/CPU s; ratio ours/gymnasium {ours / gym_rate:.1f}x")


if __name__ == "__main__":
    main()
