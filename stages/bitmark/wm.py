"""BitMark on a bit stream: the digits' bit encoding, the keyed green list over bit n-grams, the
logit bias at sampling, the z-score detector, and the attacks on the decoded image.

Images: sklearn's 8x8 digits (pixel values 0..16) quantised to 4 bits (``min(v, 15)``), written as
one 256-bit sequence, pixel by pixel in reading order, most significant bit first. The bits are
what the autoregressive model predicts and what the detector re-reads from an (attacked) image.

Green list: for an n-gram (the n-1 previous bits as context, then the bit), exactly one of the two
completions of each context is green, chosen by a keyed table ``green[position, context]`` (the
previous bits before the sequence start count as 0). So the green fraction is gamma = 0.5, as in
the official code's 2-bit pattern set {01, 10}. Our key also salts the position (see the README's
deviations: on these low-entropy images the all-zero context dominates, and without the position
every clean image would score a large z from the key alone).

Sampling adds delta to the green bit's logit (for a Bernoulli bit, the logit of 1 moves by +delta
when 1 is green, -delta when 0 is green). Detection counts the green n-grams C of the T = 256
windows: z = (C - gamma T) / sqrt(T gamma (1 - gamma)).
"""
from __future__ import annotations

import numpy as np

BITS_PER_PIXEL = 4
SIDE = 8
N_PIXELS = SIDE * SIDE
N_BITS = N_PIXELS * BITS_PER_PIXEL
LEVELS = 2 ** BITS_PER_PIXEL
GAMMA = 0.5


def quantise(images) -> np.ndarray:
    """sklearn digits' pixel values (0..16, any shape ending in 64 or 8x8) -> integers 0..15."""
    a = np.asarray(images, dtype=float)
    if a.size and (a.min() < 0 or a.max() > 16):
        raise ValueError(f"quantise: pixel values must lie in [0, 16], got [{a.min()}, {a.max()}]")
    return np.clip(np.rint(a), 0, LEVELS - 1).astype(np.int64).reshape(len(a), N_PIXELS)


def encode(pixels) -> np.ndarray:
    """(N, 64) integers 0..15 -> (N, 256) bits, pixel-major, most significant bit first."""
    q = np.asarray(pixels)
    if q.ndim != 2 or q.shape[1] != N_PIXELS:
        raise ValueError(f"encode: pixels must have shape (N, {N_PIXELS}), got {q.shape}")
    if q.size and (q.min() < 0 or q.max() >= LEVELS):
        raise ValueError(f"encode: pixel levels must be integers in [0, {LEVELS - 1}]")
    shifts = np.arange(BITS_PER_PIXEL - 1, -1, -1)
    return ((q[:, :, None] >> shifts) & 1).reshape(len(q), N_BITS).astype(np.int8)


def decode(bits) -> np.ndarray:
    """(N, 256) bits -> (N, 64) integer pixel levels 0..15."""
    b = np.asarray(bits).astype(np.int64)
    if b.ndim != 2 or b.shape[1] != N_BITS:
        raise ValueError(f"decode: bits must have shape (N, {N_BITS}), got {b.shape}")
    weights = 2 ** np.arange(BITS_PER_PIXEL - 1, -1, -1)
    return (b.reshape(len(b), N_PIXELS, BITS_PER_PIXEL) * weights).sum(-1)


def green_table(key: int, ngram: int, length: int = N_BITS) -> np.ndarray:
    """The keyed green list: ``table[i, c]`` is the green value of bit i after context c (the n-1
    previous bits read as a binary number, the oldest bit most significant)."""
    if ngram < 1:
        raise ValueError(f"green_table: ngram must be >= 1, got {ngram}")
    rng = np.random.default_rng([int(key), int(ngram), 0xB17])
    return rng.integers(0, 2, size=(length, 2 ** (ngram - 1)), dtype=np.int8)


def contexts(bits, ngram: int) -> np.ndarray:
    """(N, L) bits -> (N, L) context index of each position: its n-1 previous bits (0 before the
    start) as a binary number, oldest first."""
    b = np.asarray(bits).astype(np.int64)
    ctx = np.zeros_like(b)
    for j in range(1, ngram):                      # bit i-j has weight 2^(j-1)
        ctx[:, j:] += b[:, :-j] << (j - 1)
    return ctx


def context_at(prev_bits, i: int, ngram: int) -> np.ndarray:
    """Context index of position ``i`` for each row of ``prev_bits`` (at least i columns)."""
    b = np.asarray(prev_bits)
    c = np.zeros(len(b), dtype=np.int64)
    for j in range(1, ngram):
        if i - j >= 0:
            c += b[:, i - j].astype(np.int64) << (j - 1)
    return c


def green_counts(bits, table: np.ndarray, ngram: int) -> np.ndarray:
    """Number of green n-grams in each row of ``bits`` (N, L)."""
    b = np.asarray(bits).astype(np.int64)
    if b.ndim != 2 or b.shape[1] != table.shape[0]:
        raise ValueError(f"green_counts: bits must have shape (N, {table.shape[0]}), got {b.shape}")
    if table.shape[1] != 2 ** (ngram - 1):
        raise ValueError(f"green_counts: the table has {table.shape[1]} contexts, ngram {ngram} needs {2 ** (ngram - 1)}")
    g = table[np.arange(b.shape[1])[None, :], contexts(b, ngram)]
    return (b == g).sum(1)


def z_score(count, total: int, gamma: float = GAMMA):
    """KGW/BitMark's z: (C - gamma T) / sqrt(T gamma (1 - gamma))."""
    if total < 1 or not 0 < gamma < 1:
        raise ValueError(f"z_score: needs total >= 1 and 0 < gamma < 1, got {total}, {gamma}")
    return (np.asarray(count, dtype=float) - gamma * total) / np.sqrt(total * gamma * (1 - gamma))


def z_scores(bits, table: np.ndarray, ngram: int) -> np.ndarray:
    """The detector: z of each row of ``bits``."""
    return z_score(green_counts(bits, table, ngram), np.asarray(bits).shape[1])


def bias_logits(logits, prev_bits, i: int, table: np.ndarray, ngram: int, delta: float):
    """The watermark at sampling: the logit of bit ``i`` (of 1) moved by +delta where 1 is green,
    -delta where 0 is green. ``logits`` is a numpy or torch vector over the batch."""
    if delta == 0:
        return logits
    g = table[i, context_at(prev_bits, i, ngram)]
    sign = (2 * g.astype(np.float32) - 1) * float(delta)
    try:
        import torch

        if isinstance(logits, torch.Tensor):
            return logits + torch.from_numpy(sign).to(logits.device, logits.dtype)
    except ImportError:  # pragma: no cover
        pass
    return logits + sign


# ---- the baseline: KGW on whole pixel tokens (16 levels), the paper's token-level comparison --------

def token_green_table(key: int, length: int = N_PIXELS, levels: int = LEVELS) -> np.ndarray:
    """``table[j, c, v]``: whether level v of pixel j is green after the previous pixel's level c
    (0 before the first). Each row holds exactly half the levels (gamma = 1/2), drawn from the key."""
    rng = np.random.default_rng([int(key), 0x70C])
    table = np.zeros((length, levels, levels), dtype=bool)
    for j in range(length):
        for c in range(levels):
            table[j, c, rng.permutation(levels)[: levels // 2]] = True
    return table


def token_z_scores(pixels, table: np.ndarray) -> np.ndarray:
    """The token-level detector: z of the green pixels among the 64 (context: the previous pixel)."""
    q = np.asarray(pixels).astype(np.int64)
    if q.ndim != 2 or q.shape[1] != table.shape[0]:
        raise ValueError(f"token_z_scores: pixels must have shape (N, {table.shape[0]}), got {q.shape}")
    prev = np.concatenate([np.zeros((len(q), 1), np.int64), q[:, :-1]], axis=1)
    green = table[np.arange(q.shape[1])[None, :], prev, q]
    return z_score(green.sum(1), q.shape[1])


# ---- attacks on the decoded image, re-encoded to bits before detection -------------------------------

def flip_bits(bits, p: float, rng) -> np.ndarray:
    """Flip each bit independently with probability ``p`` (the paper's bit-flipper, at random)."""
    b = np.asarray(bits)
    return np.where(rng.random(b.shape) < p, 1 - b, b).astype(np.int8)


def pixel_noise(pixels, sigma: float, rng) -> np.ndarray:
    """Gaussian noise of ``sigma`` levels on each pixel, rounded and clipped to 0..15."""
    q = np.asarray(pixels, dtype=float)
    return np.clip(np.rint(q + sigma * rng.standard_normal(q.shape)), 0, LEVELS - 1).astype(np.int64)


def blur(pixels, sigma: float) -> np.ndarray:
    """Gaussian blur of ``sigma`` pixels on the 8x8 image (scipy.ndimage), rounded to 0..15."""
    from scipy.ndimage import gaussian_filter

    q = np.asarray(pixels, dtype=float).reshape(-1, SIDE, SIDE)
    if sigma <= 0:
        return np.asarray(pixels).astype(np.int64)
    out = np.stack([gaussian_filter(im, sigma, mode="nearest") for im in q])
    return np.clip(np.rint(out), 0, LEVELS - 1).astype(np.int64).reshape(-1, N_PIXELS)


def attack(bits, kind: str, strength: float, rng) -> np.ndarray:
    """One attack of ``kind`` (``bitflip``, ``noise``, ``blur``) at ``strength`` on (N, 256) bits."""
    if kind == "bitflip":
        return flip_bits(bits, strength, rng)
    if kind == "noise":
        return encode(pixel_noise(decode(bits), strength, rng))
    if kind == "blur":
        return encode(blur(decode(bits), strength))
    raise ValueError(f"attack: unknown kind {kind!r}; allowed: bitflip, noise, blur")


def auc(pos, neg) -> float:
    """ROC AUC of scores ``pos`` (positives) against ``neg`` (sklearn's roc_auc_score)."""
    from sklearn.metrics import roc_auc_score

    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    return float(roc_auc_score(np.r_[np.ones(len(pos)), np.zeros(len(neg))], np.r_[pos, neg]))


def tpr_at_fpr(pos, neg, fpr: float) -> float:
    """Share of ``pos`` above the threshold that ``fpr`` of ``neg`` exceed (empirical quantile)."""
    thr = np.quantile(np.asarray(neg, float), 1 - fpr)
    return float(np.mean(np.asarray(pos, float) > thr))
