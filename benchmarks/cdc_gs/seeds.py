"""cdc_gs seeds as an axis: the train stage's fits of five seeds run one after another against the
same fits in batches (a leading fit dimension in the splat tensors, splat.Fitter), on calibration
seeds only (>= 1000).

    nice -n 19 python -m benchmarks.cdc_gs.seeds [--seeds 1000,1001,1002,1003,1004] [--batches 1,20]

For each batch size (1 = one fit after another) it times every fit of the train stage (4 arms x
the images x the counts x the seeds, the default profile's sizes) in CPU seconds, checks that
every fit's render is the same bit for bit as with the first batch size, and prints the times and
their ratio to the first; then the same for the first seed alone (one seed's compute). The stage
uses the profile's ``fit_batch``.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds, batches 1 and 2.
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1000,1001,1002,1003,1004")
    ap.add_argument("--batches", default="1,20", help="fit_batch values; the first is the reference")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # the smoke profile's sizes; options given explicitly still win
        ap.set_defaults(seeds="1000,1001", batches="1,2", profile="smoke")
        a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        raise SystemExit("benchmarks use calibration seeds (>= 1000) only")
    batches = [int(b) for b in a.batches.split(",")]

    import numpy as np

    from stages.cdc_gs.arms import ARMS
    from stages.cdc_gs.params import PARAMS
    from stages.cdc_gs.prepare import load_image
    from stages.cdc_gs.train import fit_arms
    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study

    limit_threads()
    _, p = load_study("cdc_gs", PARAMS, profile=a.profile)
    imgs = [load_image(n, p.prepare.size) for n in p.prepare.images]
    n_fits = len(ARMS) * len(imgs) * len(p.train.counts)
    print(f"profile {a.profile}: {n_fits} fits per seed ({len(ARMS)} arms x {len(imgs)} images x counts "
          f"{p.train.counts}), {p.train.steps} steps; stage fit_batch {p.train.fit_batch}", flush=True)
    for label, run_seeds in ((f"{len(seeds)} seeds {seeds}", seeds), (f"1 seed [{seeds[0]}]", seeds[:1])):
        ref, ref_s = None, None
        for b in batches:
            t0 = time.process_time()
            fits = fit_arms(imgs, p.prepare, p.train.model_copy(update={"fit_batch": b}), run_seeds)
            cpu = time.process_time() - t0
            renders = {k: r["render"] for k, r in fits.items()}
            if ref is None:
                ref, ref_s = renders, cpu
                same = "reference"
            else:
                diff = max(float(np.abs(renders[k] - ref[k]).max()) for k in ref)
                same = "identical" if diff == 0 else f"max |render difference| {diff:.2e}"
            mode = "one after another" if b == 1 else f"batches of {b}"
            print(f"  {label}, {mode}: {cpu:.1f} CPU s ({cpu / len(fits):.3f} s per fit), "
                  f"ratio to the first {cpu / ref_s:.2f}; {same}", flush=True)


if __name__ == "__main__":
    main()
