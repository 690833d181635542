"""Per recording: every heart-rate and respiration estimate and the load features, from the
contact sensors (ground truth) and one setting's remote sensors."""
from __future__ import annotations

import numpy as np

from .vitals import (HR_BAND, RESP_BAND, around_rate, blink_rate, fused_waveform, heartpy_measures, naive_fusion, peak_rate,
                     resp_features, snr_fusion)


def measure(ph, se, contact: bool = True, progress=None) -> dict[str, np.ndarray]:
    """Columns (one value per recording) of the estimates and features. ``contact=False`` skips the
    contact columns (they do not depend on the setting)."""
    fs = ph.fs
    cols: dict[str, list] = {}

    def put(key, value):
        cols.setdefault(key, []).append(value)

    for i in range(len(ph.ppg)):
        if contact:
            put("gt_hr", peak_rate(ph.ppg[i], fs, HR_BAND))
            put("gt_rr", peak_rate(ph.rsp[i], fs, RESP_BAND))
            hp_c = heartpy_measures(around_rate(ph.ppg[i], fs, cols["gt_hr"][-1]), fs)   # same pipeline as remote
            put("contact_hr", cols["gt_hr"][-1])
            for k in ("rmssd", "sdnn", "pnn50", "sd1", "sd2"):
                put(f"contact_{k}", hp_c[k])
            put("gt_hr_heartpy", hp_c["bpm"])
            for k, v in resp_features(ph.rsp[i], fs).items():
                put(f"contact_{k}", v)
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
