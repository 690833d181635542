"""rppg_cogload maths against known answers: the FFT estimator on pure tones, SNR fusion, heartpy
against neurokit2's own beat rate on a clean pulse, blink counting on a trace with known blinks,
the personalised labels on a case by hand, and the classifiers' bad input."""
from __future__ import annotations

import numpy as np
import pytest

from stages.rppg_cogload.cogload import cv_accuracy, make_classifier, permute_within, zscore_within
from stages.rppg_cogload.sim import eye_trace, personal_labels
from stages.rppg_cogload.vitals import (HR_BAND, RESP_BAND, blink_rate, heartpy_measures, naive_fusion, peak_rate,
                                        snr_fusion)

FS = 30.0
T = np.arange(int(120 * FS)) / FS


@pytest.mark.parametrize("bpm", [48.0, 72.0, 150.0])
def test_fft_rate_of_a_tone_within_resolution(bpm):
    # zero-padded to 4096 points at 30 Hz: bins of 30/4096 Hz = 0.44 BPM
    assert abs(peak_rate(np.sin(2 * np.pi * bpm / 60 * T), FS, HR_BAND) - bpm) <= 0.44


def test_resp_rate_of_a_tone():
    assert abs(peak_rate(np.sin(2 * np.pi * 15 / 60 * T), FS, RESP_BAND) - 15) <= 0.44


def test_snr_fusion_follows_the_clean_sensor():
    rng = np.random.default_rng(0)
    clean = np.sin(2 * np.pi * 1.2 * T) + 0.3 * rng.standard_normal(T.size)
    # the second sensor: a stronger artifact at 1.8 Hz buried in heavy noise
    noisy = 0.5 * np.sin(2 * np.pi * 1.8 * T) + 3 * rng.standard_normal(T.size)
    rate, w = snr_fusion([clean, noisy], FS)
    assert abs(rate - 72) <= 0.44 and w[0] > 0.9 and abs(w.sum() - 1) < 1e-12
    assert naive_fusion([72.0, 108.0]) == 90.0


def test_fusion_of_identical_sensors_is_the_single_estimate():
    x = np.sin(2 * np.pi * 1.1 * T) + np.random.default_rng(1).standard_normal(T.size)
    rate, w = snr_fusion([x, x], FS)
    assert rate == peak_rate(x, FS) and np.allclose(w, 0.5)


def test_heartpy_on_a_clean_neurokit_pulse():
    import neurokit2 as nk

    x = nk.ppg_simulate(duration=60, sampling_rate=30, heart_rate=70, frequency_modulation=0, ibi_randomness=0.02,
                        drift=0, motion_amplitude=0, powerline_amplitude=0, random_state=0)
    m = heartpy_measures(x, FS)
    assert abs(m["bpm"] - 70) < 2.0 and m["rmssd"] > 0
    assert all(np.isnan(v) for v in heartpy_measures(np.zeros(1800), FS).values())   # no beats: NaN, no raise


def test_blink_count_on_a_trace_with_known_blinks():
    eye = np.ones(T.size)
    for c in np.arange(3.0, 118.0, 4.0):                      # 29 blinks in 120 s = 14.5 a minute
        eye -= np.exp(-0.5 * ((T - c) / 0.06) ** 2)
    assert blink_rate(eye, FS) == pytest.approx(14.5)
    trace = eye_trace(T.size, FS, 20.0, np.random.default_rng(0))
    assert trace.min() < 0.1 and trace.max() == 1.0


def test_personal_labels_by_hand():
    # one participant, tasks 0..5 (0 = still); median TLX over tasks 1..5 = 50
    labels = personal_labels(np.zeros(6, int), np.arange(6), np.array([20.0, 30, 40, 50, 60, 70]))
    assert labels.tolist() == [0, 0, 0, 1, 1, 1]


def test_zscore_within_and_permute_within():
    x = np.array([[1.0], [3.0], [10.0], [30.0], [np.nan], [20.0]])
    g = np.array([0, 0, 1, 1, 1, 1])
    z = zscore_within(x, g)
    assert z[:2, 0].tolist() == [-1.0, 1.0] and z[4, 0] == 0.0 and abs(z[[2, 3, 5], 0].mean()) < 1e-12
    v = np.arange(6)
    p = permute_within(v, g, np.random.default_rng(0))
    assert sorted(p[:2]) == [0, 1] and sorted(p[2:]) == [2, 3, 4, 5]


def test_separable_load_is_learned_and_shuffled_is_not():
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(8), 6)
    y = np.tile([0, 0, 0, 1, 1, 1], 8)
    x = (y + 0.1 * rng.standard_normal(y.size))[:, None]
    assert cv_accuracy(x, y, g, "lr", 4, 0) == 1.0
    assert cv_accuracy(rng.standard_normal((y.size, 1)), y, g, "svm", 4, 0) < 0.8


def test_unknown_classifier_names_the_allowed():
    with pytest.raises(ValueError, match="unknown classifier 'knn'; allowed: lr, svm, rf"):
        make_classifier("knn", 0)
