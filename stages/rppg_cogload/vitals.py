"""Vital signs from waveforms: the FFT heart-rate estimator (rPPG-Toolbox's evaluation: the
periodogram peak in 0.7-3 Hz, zero-padded to the next power of two), a spectral SNR, SNR-weighted
spectral fusion of several cameras, naive fusion (the mean of the estimates), heartpy's peak-based
heart rate and HRV, the respiratory rate, and blink counting (scipy.signal.find_peaks).

Ground truth and estimate always go through the same estimator: neurokit2's simulated PPG has its
FFT peak a few BPM from 60 / mean(IBI), so mixing the two would add a constant error.
"""
from __future__ import annotations

import warnings

import numpy as np

HR_BAND = (0.7, 3.0)       # Hz, 42-180 BPM
RESP_BAND = (0.1, 0.7)     # Hz, 6-42 breaths/min
HRV_KEYS = ("rmssd", "sdnn", "pnn50", "sd1", "sd2")


def bandpass(x: np.ndarray, fs: float, band: tuple[float, float], order: int = 2) -> np.ndarray:
    """Zero-phase Butterworth band-pass (scipy.signal) along the last axis."""
    from scipy.signal import butter, sosfiltfilt

    return sosfiltfilt(butter(order, band, btype="bandpass", fs=fs, output="sos"), x, axis=-1)


def spectrum(x: np.ndarray, fs: float, band: tuple[float, float]):
    """(frequencies, power) of the detrended, band-passed ``x`` inside ``band``: scipy's periodogram,
    zero-padded to the next power of two of the length."""
    from scipy.signal import detrend, periodogram

    y = bandpass(detrend(np.asarray(x, dtype=float)), fs, band)
    nfft = 1 << int(np.ceil(np.log2(y.shape[-1])))
    f, pxx = periodogram(y, fs=fs, nfft=nfft, detrend=False)
    keep = (f >= band[0]) & (f <= band[1])
    return f[keep], pxx[..., keep]


def peak_rate(x: np.ndarray, fs: float, band: tuple[float, float] = HR_BAND) -> float:
    """The FFT rate estimate, per minute: 60 x the frequency of the spectral peak inside ``band``."""
    f, p = spectrum(x, fs, band)
    return float(60 * f[int(np.argmax(p))])


def snr(f: np.ndarray, p: np.ndarray, width: float = 0.1) -> float:
    """Spectral SNR of one spectrum (de Haan and Jeanne's form, as a ratio): power within ``width`` Hz
    of the peak and of its second harmonic, over the rest of the band."""
    f0 = f[int(np.argmax(p))]
    sig = (np.abs(f - f0) <= width) | (np.abs(f - 2 * f0) <= 2 * width)
    return float(p[sig].sum() / max(p[~sig].sum(), 1e-12))


def snr_fusion(signals: list[np.ndarray], fs: float, band: tuple[float, float] = HR_BAND):
    """SNR-weighted fusion of several sensors' spectra, each normalised to unit power in ``band``.
    Returns (rate per minute, the weights)."""
    specs = [spectrum(x, fs, band) for x in signals]
    f = specs[0][0]
    w = np.array([snr(fi, p) for fi, p in specs])
    fused = sum(wi * p / p.sum() for wi, (_, p) in zip(w, specs))
    return float(60 * f[int(np.argmax(fused))]), w / w.sum()


def fused_waveform(signals: list[np.ndarray], weights: np.ndarray, fs: float,
                   band: tuple[float, float] = HR_BAND) -> np.ndarray:
    """The sensors' band-passed, z-scored waveforms summed with the fusion weights (for HRV features)."""
    out = 0
    for x, w in zip(signals, weights):
        y = bandpass(np.asarray(x, dtype=float) - np.mean(x), fs, band)
        out = out + w * y / (y.std() + 1e-12)
    return out


def around_rate(x: np.ndarray, fs: float, rate_per_min: float, half_width_hz: float = 0.3) -> np.ndarray:
    """``x`` band-passed to within ``half_width_hz`` of a rate already estimated (the adaptive
    band-pass of rPPG pipelines, so that peak detection sees the pulse and not the artifacts)."""
    f0 = rate_per_min / 60
    return bandpass(x, fs, (max(f0 - half_width_hz, 0.05), f0 + half_width_hz))


def naive_fusion(rates: list[float]) -> float:
    """The mean of the sensors' rate estimates (the fusion baseline that ignores signal quality)."""
    return float(np.mean(rates))


def heartpy_measures(x: np.ndarray, fs: float) -> dict:
    """heartpy's peak-based heart rate (``bpm``) and HRV (``HRV_KEYS``) of a band-passed PPG; NaN
    for every key where heartpy gives up on the signal."""
    import heartpy as hp

    y = bandpass(np.asarray(x, dtype=float) - np.mean(x), fs, HR_BAND)
    keys = ("bpm",) + HRV_KEYS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, m = hp.process(hp.scale_data(y), float(fs))
        return {k: float(m[k]) if np.isfinite(m[k]) else float("nan") for k in keys}
    except Exception:                      # heartpy raises on signals where it finds no beats
        return {k: float("nan") for k in keys}


def blink_rate(eye: np.ndarray, fs: float) -> float:
    """Blinks per minute in an eye-openness trace: peaks of the (0.25 s moving-average) closure
    at least 0.3 high and 0.3 s apart (scipy.signal.find_peaks)."""
    from scipy.signal import find_peaks

    k = max(int(0.25 * fs), 1)
    closure = 1 - np.convolve(eye, np.ones(k) / k, mode="same")
    peaks, _ = find_peaks(closure, height=0.3, distance=max(int(0.3 * fs), 1))
    return float(len(peaks) * 60 * fs / len(eye))


def resp_features(x: np.ndarray, fs: float) -> dict:
    """Respiratory rate (FFT peak in 6-42 breaths/min) and amplitude (sd of the band-passed signal)."""
    return {"rr": peak_rate(x, fs, RESP_BAND), "resp_amp": float(bandpass(x - np.mean(x), fs, RESP_BAND).std())}
