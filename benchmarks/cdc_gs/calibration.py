"""cdc_gs calibration, on calibration seeds only (>= 1000, never a verdict seed): which baseline
makes the must see the paper's idea.

The must compares CDC with ADC at equal counts (per seed: the mean over the images and the counts
of PSNR(CDC) - PSNR(ADC)); its control is CDC with the complexity map shuffled over the pixels
(CDC's mechanics, no information), judged against the same baseline by the same rule (the
t-interval of the per-seed mean, stages/common/inference.judge) and threshold (0 dB). Each
baseline design below is a variant of ADC; CDC and the control are the same fits for every design.

    nice -n 19 python -m benchmarks.cdc_gs.calibration [--seeds 1000,1001,...] [--designs a,b]

Prints, per design: the must's and the control's per-seed gains, means, intervals and verdicts,
and the mean gain per count; then the verdict seeds are not touched. Sizes and schedule are the
default profile's (stages/cdc_gs/params.json); only the baseline's prune-and-respawn varies.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds, two designs.
"""
from __future__ import annotations

import argparse
import time

# design -> the baseline arm: (policy, complexity map, FitConfig overrides) (stages/cdc_gs/splat.py)
DESIGNS = {
    # D0: 3DGS's ADC as the study ran it (prune opacity < 0.005, densify the largest gradients)
    "plain": ("adc", "wavelet", {}),
    # D1: + prune-and-respawn (3DGS's opacity reset and pruning, as a budget): prune the 5 % least
    # opaque (a) or least contributing, |c| o s_x s_y (b), or 10 % least contributing (c; CDC's
    # prune + densify shares) per event, their budget respawned by gradient
    "opacity5": ("adc", "wavelet", {"adc_rule": "opacity", "adc_prune_fraction": 0.05}),
    "contribution5": ("adc", "wavelet", {"adc_rule": "contribution", "adc_prune_fraction": 0.05}),
    "contribution10": ("adc", "wavelet", {"adc_rule": "contribution", "adc_prune_fraction": 0.10}),
    # D2: CDC's consistency rule (5 % densified, 5 % pruned per event) on ADC's loss-driven signal,
    # the accumulated gradient, in place of the wavelet complexity
    "gradient_density5": ("adc", "wavelet", {"adc_rule": "gradient_density", "adc_prune_fraction": 0.05}),
    # D3: CDC itself on the loss-driven map (each pixel's squared error at the event) instead of the
    # wavelet complexity: the same mechanics and budget, only the prior differs
    "error_map": ("cdc", "error", {}),
}
CALIBRATION_SEEDS = [1000, 1001, 1002, 1003, 1004]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default=",".join(map(str, CALIBRATION_SEEDS)))
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--profile", default="default")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # the smoke profile's sizes; options given explicitly still win
        ap.set_defaults(seeds="1000,1001", designs="plain,error_map", profile="smoke")
        a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        raise SystemExit("calibration uses seeds >= 1000 only (the verdict seeds are < 1000)")
    designs = a.designs.split(",")

    import numpy as np

    from stages.cdc_gs.evaluate import score
    from stages.cdc_gs.params import PARAMS
    from stages.cdc_gs.prepare import load_image
    from stages.cdc_gs.splat import wavelet_complexity
    from stages.cdc_gs.train import fit_arms
    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.common.runtime.params import load_study

    limit_threads(1)
    _, p = load_study("cdc_gs", PARAMS, profile=a.profile)
    prep, tr = p.prepare, p.train
    imgs = [load_image(n, prep.size) for n in prep.images]
    cmaps = [wavelet_complexity(im, prep.wavelet, prep.wavelet_levels) for im in imgs]
    arms = {"cdc": ("cdc", "wavelet", {}), "cdc_shuffled": ("cdc", "shuffled", {})}
    arms.update({f"base_{d}": DESIGNS[d] for d in designs})
    t0 = time.process_time()
    psnr = {}                                   # (arm, seed, image, count) -> PSNR
    for arm, (method, cx, overrides) in arms.items():
        fits = fit_arms(imgs, prep, tr, seeds, {arm: (method, cx)}, overrides=overrides)
        for (seed, i, _, count), r in fits.items():
            psnr[(arm, seed, i, count)] = score(imgs[i], r["render"], cmaps[i], 0.75)["psnr"]
        print(f"  {arm}: {len(fits)} fits, {time.process_time() - t0:.0f} CPU s so far", flush=True)

    def gain(a_arm: str, b_arm: str, seed: int, counts=None) -> float:
        return float(np.mean([psnr[(a_arm, seed, i, c)] - psnr[(b_arm, seed, i, c)]
                              for i in range(len(imgs)) for c in (counts or tr.counts)]))

    print(f"\nprofile {a.profile}: images {prep.images}, {prep.size}px, counts {tr.counts}, {tr.steps} steps; "
          f"calibration seeds {seeds}; PSNR gain in dB, mean over images and counts, per seed")
    for d in designs:
        base = f"base_{d}"
        method, cx, overrides = DESIGNS[d]
        print(f"\n== design {d}: baseline " + (f"CDC's machinery on the {cx} map" if method == "cdc"
                                                else f"ADC {overrides or '(plain)'}"))
        for label, arm in (("must    CDC - baseline", "cdc"), ("control shuffled - baseline", "cdc_shuffled")):
            v = [gain(arm, base, s) for s in seeds]
            j = judge(v, ">", 0.0, "interval")
            per_count = ", ".join(f"{c}: {np.mean([gain(arm, base, s, [c]) for s in seeds]):+.2f}" for c in tr.counts)
            print(f"  {label:27s} per seed [{', '.join(f'{x:+.2f}' for x in v)}] mean {j.mean:+.2f} "
                  f"90% interval [{j.interval[0]:+.2f}, {j.interval[1]:+.2f}] -> {j.verdict}; by count {per_count}")
        base_psnr = np.mean([psnr[(base, s, i, c)] for s in seeds for i in range(len(imgs)) for c in tr.counts])
        print(f"  baseline mean PSNR {base_psnr:.2f} dB")
    v = [gain("cdc", "cdc_shuffled", s) for s in seeds]
    j = judge(v, ">", 0.0, "interval")
    print(f"\nCDC - shuffled (every design): per seed [{', '.join(f'{x:+.2f}' for x in v)}] mean {j.mean:+.2f} "
          f"interval [{j.interval[0]:+.2f}, {j.interval[1]:+.2f}] -> {j.verdict}")
    print(f"total {time.process_time() - t0:.0f} CPU s")


if __name__ == "__main__":
    main()
