"""Per recording: every heart-rate and respiration estimate and the load features, from the
contact sensors (ground truth) and one setting's remote sensors."""
from __future__ import annotations

import numpy as np

from .vitals import (HR_BAND, RESP_BAND, around_rate, blink_rate, fused_waveform, heartpy_measures, naive_fusion, peak_rate,
                     resp_features, snr_fusion)


def contact_columns(ph, progress=None) -> dict[str, np.ndarray]:
    """The contact sensors' columns (ground truth and contact features); they do not depend on the
    setting of the remote sensors."""
    fs = ph.fs
    cols: dict[str, list] = {}

    def put(key, value):
        cols.setdefault(key, []).append(value)

    for i in range(len(ph.ppg)):
        gt = peak_rate(ph.ppg[i], fs, HR_BAND)
        put("gt_hr", gt)
        put("gt_rr", peak_rate(ph.rsp[i], fs, RESP_BAND))
        hp_c = heartpy_measures(around_rate(ph.ppg[i], fs, gt), fs)   # same pipeline as remote
        put("contact_hr", gt)
        for k in ("rmssd", "sdnn", "pnn50", "sd1", "sd2"):
            put(f"contact_{k}", hp_c[k])
        put("gt_hr_heartpy", hp_c["bpm"])
        for k, v in resp_features(ph.rsp[i], fs).items():
            put(f"contact_{k}", v)
        if progress is not None:
            progress.update(1)
    return {k: np.asarray(v, dtype=float) for k, v in cols.items()}


def camera_rates(ph, se) -> dict[str, np.ndarray]:
    """Only the FFT heart rates of the two cameras and of their SNR and naive fusions (what the
    calibration's noise sweep needs: no HRV, respiration or blink)."""
    out: dict[str, list] = {"rgb_hr": [], "nir_hr": [], "fusion_hr": [], "naive_hr": []}
    for i in range(len(ph.ppg)):
        rgb, nir = se.rgb[i], se.nir[i]
        out["rgb_hr"].append(peak_rate(rgb, ph.fs, HR_BAND))
        out["nir_hr"].append(peak_rate(nir, ph.fs, HR_BAND))
        out["fusion_hr"].append(snr_fusion([rgb, nir], ph.fs, HR_BAND)[0])
        out["naive_hr"].append(naive_fusion([out["rgb_hr"][-1], out["nir_hr"][-1]]))
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def remote_columns(ph, se, progress=None) -> dict[str, np.ndarray]:
    """The remote sensors' columns of one setting: every estimate and feature."""
    fs = ph.fs
    cols: dict[str, list] = {}

    def put(key, value):
        cols.setdefault(key, []).append(value)

    for i in range(len(ph.ppg)):
        rgb, nir = se.rgb[i], se.nir[i]
        put("rgb_hr", peak_rate(rgb, fs, HR_BAND))
        put("nir_hr", peak_rate(nir, fs, HR_BAND))
        fused, w = snr_fusion([rgb, nir], fs, HR_BAND)
        put("fusion_hr", fused)
        put("fusion_w_rgb", float(w[0]))
        put("naive_hr", naive_fusion([cols["rgb_hr"][-1], cols["nir_hr"][-1]]))
        hp_r = heartpy_measures(around_rate(fused_waveform([rgb, nir], w, fs), fs, fused), fs)
        put("fusion_hr_heartpy", hp_r["bpm"])
        put("remote_hr", fused)
        for k in ("rmssd", "sdnn", "pnn50", "sd1", "sd2"):
            put(f"remote_{k}", hp_r[k])
        put("thermal_rr", peak_rate(se.thermal[i], fs, RESP_BAND))
        put("radar_rr", peak_rate(se.radar[i], fs, RESP_BAND))
        rr, wr = snr_fusion([se.thermal[i], se.radar[i]], fs, RESP_BAND)
        put("resp_fusion_rr", rr)
        put("remote_rr", rr)
        amps = [resp_features(x, fs)["resp_amp"] for x in (se.thermal[i], se.radar[i])]
        put("remote_resp_amp", float(np.dot(wr, amps)))
        put("remote_blink_rate", blink_rate(se.eye[i], fs))
        if progress is not None:
            progress.update(1)
    return {k: np.asarray(v, dtype=float) for k, v in cols.items()}


def measure(ph, se, contact: bool = True, progress=None) -> dict[str, np.ndarray]:
    """Columns (one value per recording) of the estimates and features. ``contact=False`` skips the
    contact columns (they do not depend on the setting)."""
    out = contact_columns(ph) if contact else {}
    return {**out, **remote_columns(ph, se, progress)}
