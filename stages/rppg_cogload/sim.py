"""The simulated CogPhys stand-in: participants doing six tasks, their physiology (neurokit2's PPG and
respiration simulators, with load effects chosen by us), and the sensors that observe it.

Physiology is drawn once per seed (:func:`physiology`); the sensors are drawn per *setting*
(:func:`sensors`), so the main setting and its controls (noise shared by both cameras, stronger
head motion) observe the same people. Head motion is random per recording and independent of the
task: tying it to the task would leak the load into the remote signals (the calibration draft's
first prototype did).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TASKS = ("still", "read_rest", "pattern_rest", "pattern", "number", "read")
TASK_LOAD = (0.0, 0.2, 0.25, 0.8, 1.0, 0.7)        # nominal load of each task (low: first three)


@dataclass(frozen=True)
class Physiology:
    participant: np.ndarray   # (R,) int
    task: np.ndarray          # (R,) int, index into TASKS
    load: np.ndarray          # (R,) the latent load L of the recording
    tlx: np.ndarray           # (R,) the simulated NASA-TLX sum
    label: np.ndarray         # (R,) 1 = high load (tlx >= the participant's median over non-still tasks)
    hr_set: np.ndarray        # (R,) the heart rate asked of the simulator, BPM
    rr_set: np.ndarray        # (R,) the respiratory rate asked, breaths/min
    blink_set: np.ndarray     # (R,) the blink rate asked, blinks/min
    skin: np.ndarray          # (R,) RGB pulse amplitude factor (skin tone) of the participant
    ppg: np.ndarray           # (R, N) contact PPG (pulse oximeter), z-scored
    rsp: np.ndarray           # (R, N) chest-band respiration, amplitude carries the load effect
    eye: np.ndarray           # (R, N) eye openness (1 open, 0 closed), noiseless
    fs: float


def physiology(n_participants: int, duration_s: float, fs: float, effects: dict, rng: np.random.Generator,
               progress=None) -> Physiology:
    """Draw every participant's traits and every recording's physiology. ``effects`` holds the load
    effects (hr_gain, rr_gain, hrv_drop, blink_drop, resp_amp_drop), the pulse frequency modulation
    (freq_mod) and the recording-level jitter
    (hr_jitter, rr_jitter, blink_jitter, load_jitter, tlx_noise)."""
    import neurokit2 as nk

    e = effects
    n = int(round(duration_s * fs))
    rows = {k: [] for k in ("participant", "task", "load", "tlx", "hr", "rr", "blink", "skin")}
    ppg, rsp, eye = [], [], []
    for p in range(n_participants):
        base_hr, base_rr = rng.uniform(60, 85), rng.uniform(12, 18)
        base_blink, base_hrv = rng.uniform(10, 25), rng.uniform(0.06, 0.14)
        react, skin, bias = rng.uniform(0.4, 1.6), rng.uniform(0.4, 1.0), rng.normal(0, 8)
        for t, nominal in enumerate(TASK_LOAD):
            load = float(np.clip(nominal + rng.normal(0, e["load_jitter"]), 0, 1.3))
            kl = react * load
            hr = base_hr + e["hr_gain"] * kl + rng.normal(0, e["hr_jitter"])
            rr = base_rr + e["rr_gain"] * kl + rng.normal(0, e["rr_jitter"])
            blink = base_blink * (1 - e["blink_drop"] * min(kl, 1.5) / 1.5) * np.exp(rng.normal(0, e["blink_jitter"]))
            hrv = base_hrv * (1 - e["hrv_drop"] * min(kl, 1.5) / 1.5)
            tlx = 35 + 40 * load + bias + rng.normal(0, e["tlx_noise"])
            s = int(rng.integers(2**31 - 1))
            x = nk.ppg_simulate(duration=int(duration_s), sampling_rate=int(fs), heart_rate=hr, frequency_modulation=e["freq_mod"],
                                ibi_randomness=hrv, drift=0, motion_amplitude=0, powerline_amplitude=0,
                                burst_number=0, random_state=s)[:n]
            r = nk.rsp_simulate(duration=int(duration_s), sampling_rate=int(fs), respiratory_rate=rr, noise=0,
                                method="breathmetrics", random_state=s + 1)[:n]
            ppg.append((x - x.mean()) / x.std())
            rsp.append((r - r.mean()) / r.std() * (1 - e["resp_amp_drop"] * min(kl, 1.5) / 1.5))
            eye.append(eye_trace(n, fs, blink, rng))
            for k, v in zip(rows, (p, t, load, tlx, hr, rr, blink, skin)):
                rows[k].append(v)
            if progress is not None:
                progress.update(1)
    participant, tlx = np.array(rows["participant"]), np.array(rows["tlx"])
    return Physiology(participant=participant, task=np.array(rows["task"]), load=np.array(rows["load"]), tlx=tlx,
                      label=personal_labels(participant, np.array(rows["task"]), tlx),
                      hr_set=np.array(rows["hr"]), rr_set=np.array(rows["rr"]), blink_set=np.array(rows["blink"]),
                      skin=np.array(rows["skin"]), ppg=np.array(ppg), rsp=np.array(rsp), eye=np.array(eye), fs=fs)


def personal_labels(participant: np.ndarray, task: np.ndarray, tlx: np.ndarray) -> np.ndarray:
    """CogPhys's personalised label: high (1) when the TLX sum is at least the participant's median
    over the tasks other than 'still' (cognitive_load/train/utils.py of the official code)."""
    label = np.zeros(len(tlx), dtype=int)
    for p in np.unique(participant):
        mine = participant == p
        thr = np.median(tlx[mine & (task != TASKS.index("still"))])
        label[mine] = (tlx[mine] >= thr).astype(int)
    return label


def eye_trace(n: int, fs: float, rate_per_min: float, rng: np.random.Generator) -> np.ndarray:
    """Eye openness: 1, with a Gaussian dip to 0 (sd 60 ms) at each blink of a Poisson process of
    ``rate_per_min`` (blinks at least 0.3 s apart)."""
    duration = n / fs
    count = rng.poisson(rate_per_min * duration / 60)
    times = np.sort(rng.uniform(0.2, duration - 0.2, count))
    times = times[np.r_[True, np.diff(times) > 0.3]] if count else times
    t = np.arange(n) / fs
    closed = np.zeros(n)
    for c in times:
        lo, hi = int((c - 0.3) * fs), int((c + 0.3) * fs) + 1
        closed[max(lo, 0):hi] = np.maximum(closed[max(lo, 0):hi], np.exp(-0.5 * ((t[max(lo, 0):hi] - c) / 0.06) ** 2))
    return 1 - closed


def motion(n: int, fs: float, rng: np.random.Generator) -> np.ndarray:
    """One head-motion artifact of unit scale: a slow wander (low-passed random walk) plus 3-6 bursts of
    a sinusoid inside the heart-rate band (0.7-3 Hz), each 5-20 s long under a Hann window."""
    from scipy.signal import butter, sosfiltfilt

    walk = np.cumsum(rng.standard_normal(n))
    wander = sosfiltfilt(butter(2, 0.3, fs=fs, output="sos"), walk - walk.mean())
    out = wander / (wander.std() + 1e-12)
    t = np.arange(n) / fs
    for _ in range(int(rng.integers(3, 7))):
        length = int(rng.uniform(5, 20) * fs)
        start = int(rng.integers(0, max(n - length, 1)))
        seg = slice(start, start + length)
        f = rng.uniform(0.7, 3.0)
        out[seg] += rng.uniform(0.5, 1.5) * np.hanning(len(t[seg])) * np.sin(2 * np.pi * f * t[seg] + rng.uniform(0, 6.3))
    return out


@dataclass(frozen=True)
class Sensors:
    rgb: np.ndarray       # (R, N) remote PPG from the RGB camera
    nir: np.ndarray       # (R, N) remote PPG from the NIR camera
    thermal: np.ndarray   # (R, N) remote respiration (thermal, below the nose)
    radar: np.ndarray     # (R, N) remote respiration (radar; also carries the cardiac component)
    eye: np.ndarray       # (R, N) the eye-openness trace as a camera sees it
    motion_level: np.ndarray  # (R,) the recording's head-motion scale


def sensors(ph: Physiology, setting: dict, rng: np.random.Generator) -> Sensors:
    """The remote sensors of one setting. ``setting``: motion_scale, motion_shared (share of the head
    motion common to both cameras, 0-1), noise_shared (share of the sensor noise common to both
    cameras, 0-1), rgb_amp, nir_amp (pulse amplitude in units of sensor-noise sd), resp_motion (head motion
    in the respiration sensors, relative to the cameras'), thermal_noise, radar_noise, eye_noise."""
    s = setting
    n = ph.ppg.shape[1]
    rows = {k: [] for k in ("rgb", "nir", "thermal", "radar", "eye", "level")}
    for i in range(len(ph.ppg)):
        level = s["motion_scale"] * rng.uniform(0.3, 1.2)
        common, own_r, own_n = (motion(n, ph.fs, rng) for _ in range(3))
        ms = s["motion_shared"]
        m_rgb = level * (np.sqrt(ms) * common + np.sqrt(1 - ms) * own_r)
        m_nir = level * (np.sqrt(ms) * common + np.sqrt(1 - ms) * own_n)
        e0, e_r, e_n = rng.standard_normal((3, n))
        ns = s["noise_shared"]
        rows["rgb"].append(s["rgb_amp"] * ph.skin[i] * ph.ppg[i] + m_rgb + np.sqrt(ns) * e0 + np.sqrt(1 - ns) * e_r)
        rows["nir"].append(s["nir_amp"] * ph.ppg[i] + m_nir + np.sqrt(ns) * e0 + np.sqrt(1 - ns) * e_n)
        rows["thermal"].append(ph.rsp[i] + s["resp_motion"] * level * common + s["thermal_noise"] * rng.standard_normal(n))
        rows["radar"].append(ph.rsp[i] + 0.15 * ph.ppg[i] + s["resp_motion"] * level * own_n
                             + s["radar_noise"] * rng.standard_normal(n))
        rows["eye"].append(ph.eye[i] + s["eye_noise"] * rng.standard_normal(n))
        rows["level"].append(level)
    return Sensors(*(np.array(rows[k]) for k in ("rgb", "nir", "thermal", "radar", "eye")),
                   motion_level=np.array(rows["level"]))
