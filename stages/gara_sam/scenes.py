"""Synthetic scenes and corruptions for gara_sam (numpy + scipy only; no torch).

A scene is a size x size RGB image in [0, 1]: a smooth two-colour background with faint noise and
1-3 filled shapes (ellipse, rectangle, triangle) in colours kept away from the background; its mask
is the union of the shapes. Corruptions are ImageNet-C-like, each at a severity in [0, 1]:
SEEN ones appear in the adaptation set, UNSEEN ones only at test.
"""
from __future__ import annotations

import numpy as np
from scipy import ndimage

SHAPES = ("ellipse", "rect", "tri")
SEEN = ("gaussian_noise", "defocus_blur", "low_light")
UNSEEN = ("impulse_noise", "motion_blur", "fog", "pixelate", "low_contrast")
CORRUPTIONS = SEEN + UNSEEN
CONDITIONS = ("clean",) + CORRUPTIONS


def _shape_mask(kind: str, size: int, rng: np.random.Generator) -> np.ndarray:
    yy, xx = np.mgrid[0:size, 0:size] + 0.5
    s = size / 32.0
    cy, cx = rng.uniform(0.2 * size, 0.8 * size, 2)
    if kind == "ellipse":
        a, b = rng.uniform(3 * s, 8 * s, 2)
        t = rng.uniform(0, np.pi)
        u = (xx - cx) * np.cos(t) + (yy - cy) * np.sin(t)
        v = -(xx - cx) * np.sin(t) + (yy - cy) * np.cos(t)
        return (u / a) ** 2 + (v / b) ** 2 <= 1.0
    if kind == "rect":
        h, w = rng.uniform(3 * s, 7 * s, 2)
        return (np.abs(yy - cy) <= h) & (np.abs(xx - cx) <= w)
    if kind == "tri":
        while True:
            pts = np.stack([cx, cy]) + rng.uniform(-9 * s, 9 * s, (3, 2))
            area = 0.5 * abs((pts[1, 0] - pts[0, 0]) * (pts[2, 1] - pts[0, 1])
                             - (pts[2, 0] - pts[0, 0]) * (pts[1, 1] - pts[0, 1]))
            if area >= 20 * s * s:
                break
        m = np.ones((size, size), bool)
        sign = None
        for i in range(3):
            p, q = pts[i], pts[(i + 1) % 3]
            c = (q[0] - p[0]) * (yy - p[1]) - (q[1] - p[1]) * (xx - p[0])
            o = (q[0] - p[0]) * (pts[(i + 2) % 3][1] - p[1]) - (q[1] - p[1]) * (pts[(i + 2) % 3][0] - p[0])
            sign = np.sign(o)
            m &= c * sign >= 0
        return m
    raise ValueError(f"unknown shape kind {kind!r}; expected one of {SHAPES}")


def make_scenes(n: int, size: int, rng: np.random.Generator, shapes=SHAPES) -> tuple[np.ndarray, np.ndarray]:
    """``n`` scenes: images (n, 3, size, size) float32 in [0, 1] and masks (n, 1, size, size) float32."""
    if n < 1 or size < 8:
        raise ValueError(f"make_scenes needs n >= 1 and size >= 8, got n={n}, size={size}")
    bad = [k for k in shapes if k not in SHAPES]
    if bad or not shapes:
        raise ValueError(f"shapes must be a non-empty subset of {SHAPES}, got {list(shapes)}")
    imgs = np.empty((n, 3, size, size), np.float32)
    masks = np.empty((n, 1, size, size), np.float32)
    yy, xx = np.mgrid[0:size, 0:size] / size
    for i in range(n):
        c1, c2 = rng.uniform(0.1, 0.9, (2, 3))
        t = rng.uniform(0, 2 * np.pi)
        ramp = (np.cos(t) * (xx - 0.5) + np.sin(t) * (yy - 0.5)) + 0.5
        img = c1[:, None, None] * (1 - ramp) + c2[:, None, None] * ramp
        img = img + rng.normal(0, 0.02, img.shape)
        mask = np.zeros((size, size), bool)
        bg = (c1 + c2) / 2
        for _ in range(rng.integers(1, 4)):
            m = _shape_mask(shapes[rng.integers(len(shapes))], size, rng)
            while True:
                col = rng.uniform(0, 1, 3)
                if np.abs(col - bg).sum() >= 0.6:
                    break
            img[:, m] = col[:, None]
            mask |= m
        imgs[i] = np.clip(img, 0, 1)
        masks[i, 0] = mask
    return imgs, masks


def corrupt(img: np.ndarray, kind: str, severity: float, rng: np.random.Generator) -> np.ndarray:
    """One image (3, H, W) in [0, 1] under corruption ``kind`` at ``severity`` in [0, 1]."""
    if not 0.0 <= severity <= 1.0:
        raise ValueError(f"severity must be in [0, 1], got {severity}")
    s = severity
    x = img.astype(np.float64)
    h = x.shape[-1]
    if kind == "clean":
        out = x
    elif kind == "gaussian_noise":
        out = x + rng.normal(0, 0.12 + 0.16 * s, x.shape)
    elif kind == "defocus_blur":
        out = np.stack([ndimage.gaussian_filter(c, 1.0 + 1.2 * s) for c in x])
    elif kind == "low_light":
        out = (x ** 1.5) * (0.25 - 0.15 * s) + rng.normal(0, 0.03, x.shape)
    elif kind == "impulse_noise":
        out = x.copy()
        u = rng.uniform(size=x.shape)
        p = 0.06 + 0.12 * s
        out[u < p / 2] = 0.0
        out[u > 1 - p / 2] = 1.0
    elif kind == "motion_blur":
        length = int(round(3 + 4 * s))
        k = np.ones(length) / length
        axis = 1 + int(rng.integers(2))
        out = ndimage.convolve1d(x, k, axis=axis, mode="nearest")
    elif kind == "fog":
        field = ndimage.gaussian_filter(rng.normal(0, 1, x.shape[1:]), h / 6)
        field = (field - field.min()) / max(np.ptp(field), 1e-9)
        a = 0.45 + 0.3 * s
        out = x * (1 - a) + a * (0.6 + 0.4 * field)[None]
    elif kind == "pixelate":
        f = 2 if s < 0.5 else 4
        small = x[:, ::f, ::f]
        out = np.repeat(np.repeat(small, f, axis=1), f, axis=2)[:, :h, :h]
    elif kind == "low_contrast":
        c = 0.3 - 0.2 * s
        m = x.mean()
        out = (x - m) * c + m
    else:
        raise ValueError(f"unknown corruption {kind!r}; expected 'clean' or one of {CORRUPTIONS}")
    return np.clip(out, 0, 1).astype(np.float32)


def corrupt_batch(imgs: np.ndarray, kinds, rng: np.random.Generator, sev_low: float = 0.0) -> np.ndarray:
    """Each image of ``imgs`` under its kind (a list, one a row), at a severity drawn in [sev_low, 1]."""
    return np.stack([corrupt(im, k, float(rng.uniform(sev_low, 1.0)), rng) for im, k in zip(imgs, kinds)])
