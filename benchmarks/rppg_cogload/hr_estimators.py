"""rppg_cogload: our FFT heart-rate estimator (stages/rppg_cogload/vitals.peak_rate, rPPG-Toolbox's
FFT evaluation written with scipy) against the libraries' peak-based estimators, heartpy
(hp.process) and neurokit2 (nk.ppg_process), on the same simulated contact PPGs: their
agreement (mean absolute difference, BPM; mean signed difference) and CPU time per signal, with the
ratios, in one run.

    nice -n 19 python -m benchmarks.rppg_cogload.hr_estimators [n_signals]

``--smoke`` runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def main(n: int = 40) -> None:
    import heartpy as hp
    import neurokit2 as nk

    from stages.common.device import limit_threads
    from stages.rppg_cogload.vitals import HR_BAND, bandpass, peak_rate

    limit_threads()
    rng = np.random.default_rng(1000)          # a calibration seed (>= 1000), never a verdict seed
    fs = 30
    sig = [nk.ppg_simulate(duration=120, sampling_rate=fs, heart_rate=float(rng.uniform(55, 110)),
                           frequency_modulation=0.1, ibi_randomness=0.1, drift=0, motion_amplitude=0,
                           powerline_amplitude=0, random_state=1000 + int(k)) for k in range(n)]
    out, cpu = {}, {}
    t = time.process_time()
    out["fft (ours)"] = [peak_rate(x, fs) for x in sig]
    cpu["fft (ours)"] = time.process_time() - t
    t = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out["heartpy"] = [hp.process(hp.scale_data(bandpass(x - x.mean(), fs, HR_BAND)), float(fs))[1]["bpm"] for x in sig]
    cpu["heartpy"] = time.process_time() - t
    t = time.process_time()
    out["neurokit2"] = [float(np.mean(nk.ppg_process(x, sampling_rate=fs)[0]["PPG_Rate"])) for x in sig]
    cpu["neurokit2"] = time.process_time() - t
    ref = np.array(out["fft (ours)"])
    for k, v in out.items():
        d = np.array(v) - ref
        print(f"{k:11s} CPU {1000 * cpu[k] / n:7.2f} ms/signal (x{cpu[k] / cpu['fft (ours)']:.1f} of ours)  "
              f"vs ours: mean |diff| {np.mean(np.abs(d)):.2f} BPM, mean diff {np.mean(d):+.2f} BPM")
    d = np.array(out["heartpy"]) - ref
    print(f"peak-based and FFT rates of the same clean pulse differ by {np.mean(np.abs(d)):.2f} BPM on average: "
          "ground truth and estimate must go through the same estimator")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n_signals", nargs="?", type=int, default=40)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:                    # the same code path at tiny sizes (figures meaningless)
        print("smoke: 2 signals", flush=True)
    main(2 if a.smoke else a.n_signals)
