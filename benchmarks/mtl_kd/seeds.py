"""mtl_kd seeds as an axis: the train stage's compute (three teachers, the distilled student and
the RL-only control of every seed) with all seeds in one process, one after another, as the stage
runs them (stages.common.seeds.run_seeds), against one process per seed (what a DVC matrix
stage over seeds would run); and what a seed dimension could save at most.

    nice -n 10 python -m benchmarks.mtl_kd.seeds [--seeds 1000,...] [--profile default] [--set train.teacher.steps=20 ...]
    python -m benchmarks.mtl_kd.seeds --smoke        # the smoke profile, two seeds, in seconds (what CI runs)

It prints CPU and wall seconds of both ways and their ratio, and checks that every seed's weights
are the same bit for bit either way (a seed's figures depend on that seed alone). The models are
small but their rollouts are not: a REINFORCE step of the default profile is a batch of 24
instances x 10 starts through 2 attention layers, move by move. The last line times one
REINFORCE step on the seeds' batches stacked into one batch (one call) against one call per
seed's batch, on one net: the most a seed dimension in the tensors (a stacked net per seed,
stages.common.seeds.stack_modules) could save in the teachers' and the control's steps, most of
the train stage. Calibration seeds only (>= 1000): never a verdict seed.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, parse_seeds, seed_parser, seeds_main, study_params)


def one_seed(seed: int, p) -> dict:
    """The train stage's compute for one seed: {net name/weight name: weights as numpy arrays}."""
    from stages.mtl_kd.train import train_seed

    nets, _ = train_seed(p.train, p.prepare, seed)
    return {f"{name}/{k}": t.numpy() for name, net in nets.items() for k, t in net.state_dict().items()}


def stacked_step(p, seeds, repeats: int = 3) -> tuple[float, float]:
    """CPU s of a REINFORCE step on the seeds' batches one call each, and on them stacked in one."""
    import numpy as np
    import torch

    from stages.mtl_kd import models, vrp

    net = models.make("teacher", p.train.teacher)
    opt = torch.optim.Adam(net.parameters(), lr=p.train.teacher.lr)
    gen = torch.Generator().manual_seed(0)
    batches = [vrp.generate("cvrp", p.prepare.n, p.train.teacher.batch, np.random.default_rng([s, 9])) for s in seeds]
    models.reinforce_step(net, opt, batches[0], gen, p.train.starts)              # warm up
    c0 = time.process_time()
    for _ in range(repeats):
        for b in batches:
            models.reinforce_step(net, opt, b, gen, p.train.starts)
    apart = (time.process_time() - c0) / repeats
    stacked = vrp.concat(batches)
    c0 = time.process_time()
    for _ in range(repeats):
        models.reinforce_step(net, opt, stacked, gen, p.train.starts)
    return apart, (time.process_time() - c0) / repeats


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__, sets=True))
    a, seeds = parse_seeds(ap)

    from stages.common.device import limit_threads
    from stages.mtl_kd.params import PARAMS

    limit_threads()
    p = study_params("mtl_kd", PARAMS, a)
    if seeds_main(a, seeds, lambda s: one_seed(s, p), __file__,
                  label=f"profile {a.profile} {' '.join(a.set)}".rstrip(),
                  what="the train stage's compute", figures="weights",
                  note="imports already paid by this process") is None:
        return                       # a child: one seed, its weights written
    t_apart, t_stacked = stacked_step(p, seeds)
    print(f"  a REINFORCE step (batch {p.train.teacher.batch} x {p.train.starts} starts, n={p.prepare.n}), one "
          f"call per seed: {t_apart:.3f} CPU s for {len(seeds)}; their batches stacked in one call: "
          f"{t_stacked:.3f} CPU s (ratio {t_stacked / t_apart:.2f}: the most a seed dimension could save there)")


if __name__ == "__main__":
    main()
