"""nac_b: the verdict seeds batched in one simulation against one seed after another, on
calibration seeds (>= 1000; the verdict seeds are never run here).

    nice -n 19 python -m benchmarks.nac_b.seeds [--seeds 1000,1001,1002,1003,1004] [--profile default] [--smoke]

The train stage runs every seed's runs in one simulation per sweep (a seed dimension: each run
plays its own seed's MDP from a stack and draws from its own seed's generator,
stages/nac_b/nacb.py). This script times, in one process, with the profile's sizes (process time:
user + sys of this process; wall beside), the train stage's compute (the regret sweep and the
batching sweep) for all ``--seeds``:

1. **batched**: all seeds in one simulation per sweep, as the stage runs;
2. **sequential**: the same functions one seed at a time, one after another;

checks that every seed's regrets are the same bit for bit in both, and prints the ratio.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, seeds 1000, 1001.
"""
from __future__ import annotations

import argparse
import time


class Clock:
    """Process and wall seconds of a block."""

    def __enter__(self):
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.cpu, self.wall = time.process_time() - self.cpu, time.perf_counter() - self.wall


def mdps_of(p, seeds) -> dict:
    """{seed: {name: (P, r, info)}} as prepare makes them (structure check skipped: not timed here)."""
    from stages.nac_b.prepare import NAMES, build_mdps, references

    pp = p.prepare.model_copy(update={"max_policies_checked": 1})
    out = {}
    for s in seeds:
        m = build_mdps(pp, s)
        out[s] = {k: (m[k].P, m[k].r, references(m[k], pp)) for k in NAMES}
    return out


def train(mdps: dict, p, seeds) -> dict:
    """The train stage's compute for ``seeds`` in one simulation per sweep: {seed: (regret, batching)}."""
    from stages.nac_b.train import batching_sweep, regret_sweep

    tp = p.train
    reg = regret_sweep(mdps, seeds, tp.regret, tp, progress=None)
    bat = batching_sweep(mdps, seeds, tp.batching, tp, progress=False)
    return {s: (reg[s], bat[s]) for s in seeds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1000,1001,1002,1003,1004", help="calibration seeds (>= 1000)")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.profile, a.seeds = "smoke", "1000,1001"
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        ap.error(f"--seeds {a.seeds}: calibration seeds are >= 1000; the verdict seeds are never run here")

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.nac_b.params import PARAMS

    limit_threads(1)
    _, p = load_study("nac_b", PARAMS, profile=a.profile)
    rp, bp = p.train.regret, p.train.batching
    print(f"profile {a.profile}: regret sweep T up to {rp.T_grid[-1]}, batching sweep T = {bp.T}; seeds {seeds}",
          flush=True)
    mdps = mdps_of(p, seeds)
    with Clock() as batched:
        together = train(mdps, p, seeds)
    print(f"batched, all {len(seeds)} seeds in one simulation per sweep: {batched.cpu:.1f} s process "
          f"({batched.wall:.1f} s wall)", flush=True)
    cpu = wall = 0.0
    identical = True
    for s in seeds:
        with Clock() as one:
            alone = train(mdps, p, [s])[s]
        cpu, wall = cpu + one.cpu, wall + one.wall
        identical &= alone == together[s]
        print(f"  seed {s} alone: {one.cpu:.1f} s process ({one.wall:.1f} s wall)", flush=True)
    print(f"sequential, one seed after another: {cpu:.1f} s process ({wall:.1f} s wall); every seed's runs "
          f"{'are' if identical else 'are NOT'} the same bit for bit in both", flush=True)
    print(f"batched / sequential: {batched.cpu / cpu:.2f} process time, {batched.wall / wall:.2f} wall", flush=True)
    if not identical:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
