"""rl_vla: the verdict seeds in one process (as the stages run them) vs one process per seed.

    nice -n 10 python benchmarks/rl_vla/seeds.py [--seeds 1000,1001,...] [--profile default]
    --smoke: the smoke profile's sizes and two seeds, in seconds (what CI runs).

The study's costly part is stable-baselines3's PPO (its own rollout buffer, vectorised
environments and optimiser per run) and Python environment stepping: there is no seed dimension to
batch the five seeds' policies in one tensor without rewriting PPO, so "batched" here means what
the stages do, every seed in one process one after another (imports of torch, stable-baselines3 and
MLflow paid once), against one process per seed (what a DVC matrix stage over seeds would run).
Both run prepare_seed, train_seed and evaluate_seed of the study for each seed; the script prints
wall and CPU seconds of both, their ratio, and checks that every seed's per-episode successes are
the same either way (a seed's figures depend on that seed alone). Calibration seeds only (>= 1000).
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))   # the repository, for benchmarks.common

from benchmarks.common.calibration import cpu_children, cpu_self, parse_seeds, seed_parser  # noqa: E402


def one_seed(seed: int, profile: str) -> dict:
    """prepare + train + evaluate of one seed: {"<method>/<split>": per-episode successes}."""
    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.rl_vla.evaluate import evaluate_seed
    from stages.rl_vla.params import PARAMS
    from stages.rl_vla.prepare import prepare_seed
    from stages.rl_vla.train import train_seed

    limit_threads()
    _, p = load_study("rl_vla", PARAMS, profile=profile)
    data, more, episodes, _ = prepare_seed(p, seed)
    policies, _, _ = train_seed(p, data, more, seed)
    success = evaluate_seed(policies, episodes, p, seed)
    return {f"{m}/{s}": v for m, by in success.items() for s, v in by.items()}


def main() -> None:
    ap = seed_parser(__doc__.split("\n")[0])
    ap.add_argument("--one", type=int, help=__import__("argparse").SUPPRESS)   # child: one seed
    ap.add_argument("--out", help=__import__("argparse").SUPPRESS)
    a, seeds = parse_seeds(ap)
    import numpy as np

    if a.one is not None:
        np.savez(a.out, **one_seed(a.one, a.profile))
        return
    from stages.common.seeds import run_seeds

    with tempfile.TemporaryDirectory() as tmp:     # one process per seed (imports paid by each)
        w0, c0 = time.perf_counter(), cpu_children()
        for s in seeds:
            subprocess.run([sys.executable, str(Path(__file__).resolve()), "--one", str(s), "--profile", a.profile,
                            "--seeds", str(s), "--out", f"{tmp}/{s}.npz"], cwd=REPO, check=True)
        wall_per, cpu_per = time.perf_counter() - w0, cpu_children() - c0
        apart = {s: dict(np.load(f"{tmp}/{s}.npz")) for s in seeds}
    w0, c0 = time.perf_counter(), cpu_self()       # every seed in this process, as the stages run them
    together = run_seeds(seeds, lambda s: one_seed(s, a.profile), what="seed")
    wall_one, cpu_one = time.perf_counter() - w0, cpu_self() - c0
    same = all(set(apart[s]) == set(together[s]) and all(np.array_equal(apart[s][k], together[s][k]) for k in apart[s])
               for s in seeds)
    print(f"profile {a.profile}, calibration seeds {seeds}: prepare + train + evaluate compute")
    print(f"  one process per seed: {wall_per:.1f} s wall, {cpu_per:.1f} s CPU")
    print(f"  all seeds in one process (the stages): {wall_one:.1f} s wall, {cpu_one:.1f} s CPU "
          f"(imports paid once, in the first seed)")
    print(f"  ratio one process / one per seed: wall {wall_one / wall_per:.2f}, CPU {cpu_one / cpu_per:.2f}")
    print(f"  every seed's successes the same both ways: {same}")
    if not same:
        raise SystemExit("a seed's successes differ between the two ways: its figures do not depend on its seed alone")


if __name__ == "__main__":
    main()
