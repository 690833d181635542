"""bitmark's watermark maths against hand-computed cases and the detector's null distribution."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from stages.bitmark import wm


def test_encode_decode_round_trip_and_bit_order():
    px = np.arange(64).reshape(1, 64) % 16
    bits = wm.encode(px)
    assert bits.shape == (1, 256)
    assert bits[0, :8].tolist() == [0, 0, 0, 0, 0, 0, 0, 1]          # pixel 0 = 0000, pixel 1 = 0001
    assert bits[0, 4 * 11:4 * 12].tolist() == [1, 0, 1, 1]            # pixel 11 = 11 = 1011, MSB first
    assert (wm.decode(bits) == px).all()


def test_quantise_clips_16_to_15_and_rejects_out_of_range():
    assert wm.quantise(np.array([[0, 7.4, 16] + [0] * 61])).tolist()[0][:3] == [0, 7, 15]
    with pytest.raises(ValueError, match=r"pixel values must lie in \[0, 16\]"):
        wm.quantise(np.full((1, 64), 17.0))
    with pytest.raises(ValueError, match="pixels must have shape"):
        wm.encode(np.zeros((2, 10), int))
    with pytest.raises(ValueError, match="bits must have shape"):
        wm.decode(np.zeros((2, 10), int))


def test_contexts_by_hand():
    b = np.array([[1, 0, 1, 1, 0]])
    assert wm.contexts(b, 1).tolist() == [[0, 0, 0, 0, 0]]
    assert wm.contexts(b, 2).tolist() == [[0, 1, 0, 1, 1]]            # the previous bit (0 before the start)
    # n = 3: previous bit weight 1, the one before weight 2
    assert wm.contexts(b, 3).tolist() == [[0, 1, 2, 1, 3]]
    assert [int(wm.context_at(b, i, 3)[0]) for i in range(5)] == [0, 1, 2, 1, 3]


def test_green_count_and_z_by_hand():
    # ngram 2, length 4: green value of bit i after previous bit c
    table = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=np.int8)
    bits = np.array([[1, 1, 1, 0],      # contexts 0,1,1,1 -> greens 1,1,1,0: all 4 green
                     [0, 0, 0, 1]])     # contexts 0,0,0,0 -> greens 1,0,1,0: bit0 0!=1, bit1 0==0, bit2 0!=1, bit3 1!=0 -> 1
    assert wm.green_counts(bits, table, 2).tolist() == [4, 1]
    # z = (C - T/2) / sqrt(T/4) with T = 4
    assert np.allclose(wm.z_scores(bits, table, 2), [(4 - 2) / 1.0, (1 - 2) / 1.0])
    assert wm.z_score(140, 256) == pytest.approx((140 - 128) / 8)
    assert wm.z_score(30, 100, 0.25) == pytest.approx((30 - 25) / np.sqrt(100 * 0.25 * 0.75))
    with pytest.raises(ValueError, match="0 < gamma < 1"):
        wm.z_score(3, 10, 1.0)
    with pytest.raises(ValueError, match="table has 2 contexts, ngram 3 needs 4"):
        wm.green_counts(bits, table, 3)


def test_null_distribution_of_z_on_uniform_bits_is_the_binomials():
    """Unwatermarked (uniform random) bits: the green count is Binomial(256, 1/2) whatever the key."""
    rng = np.random.default_rng(0)
    table = wm.green_table(1, 2)
    z = wm.z_scores(rng.integers(0, 2, size=(20000, 256)), table, 2)
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.02
    assert np.mean(z > 2) == pytest.approx(stats.binom.sf(144, 256, 0.5), abs=0.005)
    assert np.mean(z > 4) < 3e-4


def test_green_table_is_keyed_and_balanced():
    a, b = wm.green_table(1, 4), wm.green_table(2, 4)
    assert a.shape == (256, 8) and (a == wm.green_table(1, 4)).all() and (a != b).any()
    assert abs(a.mean() - 0.5) < 0.05


def test_bias_moves_the_green_bits_logit():
    table = np.array([[1, 0], [0, 1]], dtype=np.int8)
    prev = np.array([[0, 0], [1, 0]])
    out = wm.bias_logits(np.zeros(2), prev, 1, table, 2, 2.0)      # contexts 0 and 1 -> green 0 and 1
    assert out.tolist() == [-2.0, 2.0]
    assert wm.bias_logits(np.zeros(2), prev, 1, table, 2, 0.0).tolist() == [0.0, 0.0]


def test_attacks():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, size=(5, 256)).astype(np.int8)
    assert (wm.flip_bits(bits, 0.0, rng) == bits).all() and (wm.flip_bits(bits, 1.0, rng) == 1 - bits).all()
    px = wm.decode(bits)
    assert (wm.pixel_noise(px, 0.0, rng) == px).all() and (wm.blur(px, 0.0) == px).all()
    flat = np.full((1, 64), 9)
    assert (wm.blur(flat, 1.0) == 9).all()                             # a constant image stays constant
    assert wm.attack(bits, "noise", 3.0, rng).shape == bits.shape
    with pytest.raises(ValueError, match="unknown kind 'jpeg'"):
        wm.attack(bits, "jpeg", 1.0, rng)


def test_auc_and_tpr_by_hand():
    assert wm.auc([3, 4], [1, 2]) == 1.0
    assert wm.auc([1, 3], [2, 4]) == pytest.approx(0.25)               # 1 of 4 pairs ordered
    assert wm.tpr_at_fpr([5, 6, 0], np.arange(100), 0.05) == pytest.approx(0.0)
    assert wm.tpr_at_fpr([500, 600, 0], np.arange(100), 0.05) == pytest.approx(2 / 3)


def test_token_green_table_and_z_by_hand():
    table = wm.token_green_table(4)
    assert table.shape == (64, 16, 16) and (table.sum(2) == 8).all()
    # a tiny table: 2 pixels, 2 levels; green: pixel 0 after 0 -> level 1; pixel 1 after 1 -> level 0
    t = np.zeros((2, 2, 2), bool)
    t[0, 0, 1] = True
    t[1, 1, 0] = True
    t[1, 0, 0] = True
    px = np.array([[1, 0], [0, 1]])          # row 0: both green; row 1: pixel 0 red, pixel 1 after 0 -> 1 red
    assert np.allclose(wm.token_z_scores(px, t), [(2 - 1) / np.sqrt(0.5), (0 - 1) / np.sqrt(0.5)])
