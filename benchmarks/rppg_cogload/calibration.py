"""rppg_cogload calibration: simulate, measure and classify at a given size and setting, and print
each check's figure and its controls. ``python benchmarks/rppg_cogload/calibration.py SEED P DURATION``.
``--smoke`` runs it at tiny sizes in seconds (what CI runs)."""
from __future__ import annotations

import argparse
import time

import numpy as np

from stages.rppg_cogload.cogload import CONFIGS, cv_accuracy, global_standardise, permute_within, zscore_within
from stages.rppg_cogload.sim import physiology, sensors

EFFECTS = dict(freq_mod=0.1, hr_gain=9.0, rr_gain=3.5, hrv_drop=0.05, blink_drop=0.5, resp_amp_drop=0.05, hr_jitter=4.0,
               rr_jitter=2.0, blink_jitter=0.2, load_jitter=0.15, tlx_noise=6.0)
MAIN = dict(motion_scale=float(__import__("os").environ.get("MOTION", 1.5)), motion_shared=0.3, noise_shared=0.0, rgb_amp=0.5, nir_amp=0.35, resp_motion=1.0, thermal_noise=2.0,
            radar_noise=2.0, eye_noise=0.1)
import os
ONLY = [x for x in os.environ.get("ONLY", "").split(",") if x]
SETTINGS = {"main": MAIN, "shared_noise": {**MAIN, "motion_shared": 1.0, "noise_shared": 1.0},
            "high_motion": {**MAIN, "motion_scale": 4.0}}


def mae(a, b):
    return float(np.nanmean(np.abs(a - b)))


def main(seed=0, n_part=37, duration=120.0, fs=30.0, smoke=False):
    from stages.rppg_cogload.measure import measure
    kw = {"rf_trees": 5} if smoke else {}          # smoke: a 5-tree forest
    t0 = time.process_time()
    rng = np.random.default_rng(seed)
    ph = physiology(n_part, duration, fs, EFFECTS, rng)
    t1 = time.process_time()
    print(f"simulate physiology {t1 - t0:.1f} s CPU; labels high {ph.label.mean():.2f}")
    cols = {}
    for k_set, (name, st) in enumerate(SETTINGS.items()):
        if ONLY and name not in ONLY:
            continue
        t = time.process_time()
        se = sensors(ph, st, np.random.default_rng([seed, 1, k_set]))
        m = measure(ph, se, contact=(name == "main"))
        if name == "main":
            base = m
        else:
            m = {**{k: v for k, v in base.items() if k.startswith(("gt_", "contact_"))}, **m}
        cols[name] = m
        gt = m["gt_hr"]
        e = {k: mae(m[f"{k}_hr"], gt) for k in ("rgb", "nir", "fusion", "naive")}
        best = min(e["rgb"], e["nir"])
        print(f"[{name}] {time.process_time() - t:.1f} s CPU  HR MAE rgb {e['rgb']:.2f} nir {e['nir']:.2f} "
              f"fusion {e['fusion']:.2f} naive {e['naive']:.2f}  fusion/best {e['fusion'] / best:.3f} "
              f"naive/best {e['naive'] / best:.3f}; heartpy fusion {mae(m['fusion_hr_heartpy'], m['gt_hr_heartpy']):.2f} "
              f"hp-gt vs fft-gt bias {np.nanmean(m['gt_hr_heartpy'] - gt):.2f}; RR MAE thermal "
              f"{mae(m['thermal_rr'], m['gt_rr']):.2f} radar {mae(m['radar_rr'], m['gt_rr']):.2f} fused {mae(m['resp_fusion_rr'], m['gt_rr']):.2f}")
        t = time.process_time()
        y, g = ph.label, ph.participant
        for clf in (("lr", "svm", "rf") if name == "main" and not ONLY else ("lr",)):
            acc = {c: cv_accuracy(zscore_within(np.column_stack([m[k] for k in cols_]), g), y, g, clf, 4, seed, **kw)
                   for c, cols_ in CONFIGS.items()}
            print(f"  {clf}: " + " ".join(f"{c} {a:.3f}" for c, a in acc.items()) +
                  f"  gap {100 * (acc['remote_ppg_resp_blink'] - acc['contact']):+.1f} pp  blink adds "
                  f"{100 * (acc['remote_ppg_resp_blink'] - acc['remote_ppg_resp']):+.1f}")
        if name == "main":
            xr = np.column_stack([m[k] for k in CONFIGS["remote_ppg_resp_blink"]])
            xs = xr.copy()
            xs[:, -1] = permute_within(xr[:, -1], g, np.random.default_rng(seed))
            print(f"  blink shuffled within participant: {cv_accuracy(zscore_within(xs, g), y, g, 'lr', 4, seed):.3f}")
            xc = np.column_stack([m[k] for k in CONFIGS["contact"]])
            print(f"  contact no normalisation: {cv_accuracy(global_standardise(xc), y, g, 'lr', 4, seed):.3f}")
            perms = [cv_accuracy(zscore_within(xc, g), permute_within(y, g, np.random.default_rng([seed, k])), g, 'lr', 4, seed)
                     for k in range(5)]
            print(f"  permuted labels (5): {np.mean(perms):.3f} {np.round(perms, 3)}")
        print(f"  classify {time.process_time() - t:.1f} s CPU")
    print(f"total {time.process_time() - t0:.1f} s CPU")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seed", nargs="?", type=int, default=0)
    ap.add_argument("participants", nargs="?", type=int, default=37)
    ap.add_argument("duration", nargs="?", type=float, default=120.0, help="seconds per recording")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:                    # the same code path at tiny sizes (figures meaningless)
        print("smoke: 4 participants, 30 s recordings, 5-tree forest", flush=True)
        main(a.seed, 4, 30.0, smoke=True)
    else:
        main(a.seed, a.participants, a.duration)
