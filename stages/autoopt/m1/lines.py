"""Line segmentation of a formulation image by its horizontal projection profile.

Formulations are typeset one item a line (or all on one line) with gaps between the lines, so
the rows of a (deskewed) image that hold no ink separate the lines:

1. ink = 1 - grey / 255; a pixel is ink where it exceeds ``threshold`` (the handwriting-like
   split's paper tint and noise stay below it);
2. deskew: the handwriting-like split is rotated by a few degrees, which tilts a long line across
   its neighbours' rows. Each candidate angle shears the ink columns vertically (column x moves by
   -tan(angle) * x) and the angle whose horizontal projection profile is sharpest (the largest sum
   of squared row counts) is kept, then applied to the grey image;
3. segments: maximal runs of rows holding at least ``min_row_ink`` ink pixels; a run whose ink is
   narrow (an operator's limits, ``\\min_x``'s x, a sum's bounds) or thin is merged into the
   nearer neighbour, since it belongs to the line above or below;
4. each segment is cropped to its ink columns (plus a margin) and returned as an ink array.

Everything here is numpy (and scipy's ``map_coordinates`` for the shear); nothing imports torch.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SegmentSpec:
    threshold: float = 0.35      # ink level above which a pixel counts as ink
    min_row_ink: int = 1         # ink pixels a row needs to belong to a line
    max_skew_deg: float = 3.0    # deskew search range, +- degrees
    skew_steps: int = 25         # candidate angles in that range
    min_width: float = 2.5       # a segment narrower than this x the median segment height is merged
    min_cover: float = 0.5       # ... or one whose ink covers less than this share of its columns
    fill: int = 4                # (a column counts as covered within this many pixels of an inked one)
    min_height: int = 4          # ... or one thinner than this (pixels)
    margin: int = 2              # pixels kept around a line's ink

    def __post_init__(self) -> None:
        if not 0 < self.threshold < 1:
            raise ValueError(f"threshold must be in (0, 1), got {self.threshold}")
        if self.min_row_ink < 1:
            raise ValueError(f"min_row_ink must be >= 1, got {self.min_row_ink}")
        if self.max_skew_deg < 0 or self.skew_steps < 1:
            raise ValueError(f"max_skew_deg must be >= 0 and skew_steps >= 1, got "
                             f"{self.max_skew_deg}, {self.skew_steps}")
        if self.min_width < 0 or not 0 <= self.min_cover <= 1 or self.fill < 0 or self.min_height < 1:
            raise ValueError(f"min_width must be >= 0, min_cover in [0, 1], fill >= 0 and min_height >= 1, "
                             f"got {self.min_width}, {self.min_cover}, {self.fill}, {self.min_height}")


def to_ink(img: np.ndarray) -> np.ndarray:
    """Grey uint8 (white paper, dark ink) -> float32 ink in [0, 1]."""
    if img.ndim != 2:
        raise ValueError(f"a grey image (H, W) is needed, got shape {img.shape}")
    return 1.0 - img.astype(np.float32) / 255.0


def _sheared_profile(mask: np.ndarray, slope: float) -> np.ndarray:
    """Row counts of a binary mask after moving column x by round(-slope * (x - W/2)) rows."""
    h, w = mask.shape
    rows, cols = np.nonzero(mask)
    shift = np.round(-slope * (cols - w / 2)).astype(np.int64)
    r = rows + shift
    r -= r.min(initial=0)
    return np.bincount(r, minlength=1)


def skew_angle(mask: np.ndarray, max_deg: float, steps: int) -> float:
    """The angle (degrees) in [-max_deg, max_deg] whose shear gives the sharpest profile."""
    if steps == 1 or max_deg == 0 or not mask.any():
        return 0.0
    angles = np.linspace(-max_deg, max_deg, steps)
    scores = [float((_sheared_profile(mask, np.tan(np.radians(a))) ** 2).sum()) for a in angles]
    best = int(np.argmax(scores))
    # prefer no correction when it ties the best (printed images are not rotated)
    zero = int(np.argmin(np.abs(angles)))
    if abs(angles[zero]) < 1e-9 and scores[zero] >= scores[best]:
        return 0.0
    return float(angles[best])


def shear(ink: np.ndarray, angle_deg: float) -> np.ndarray:
    """Move column x of an ink image by -tan(angle) * (x - W/2) rows (linear interpolation),
    growing the canvas so nothing is cut."""
    if angle_deg == 0:
        return ink
    from scipy.ndimage import map_coordinates

    h, w = ink.shape
    slope = np.tan(np.radians(angle_deg))
    shifts = -slope * (np.arange(w) - w / 2)
    lo, hi = int(np.floor(shifts.min())), int(np.ceil(shifts.max()))
    out_h = h + hi - lo
    rr, cc = np.meshgrid(np.arange(out_h, dtype=np.float32), np.arange(w, dtype=np.float32), indexing="ij")
    src_r = rr + lo - shifts[None, :].astype(np.float32)
    return map_coordinates(ink, [src_r, cc], order=1, mode="constant", cval=0.0).astype(np.float32)


def row_runs(profile: np.ndarray, min_ink: int) -> list[tuple[int, int]]:
    """Maximal runs [top, bottom) of rows whose count is >= min_ink."""
    on = np.concatenate([[False], profile >= min_ink, [False]])
    edges = np.flatnonzero(on[1:] != on[:-1])
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def merge_runs(runs: list[tuple[int, int]], small: list[bool]) -> list[tuple[int, int]]:
    """Merge each ``small`` run into its nearer neighbour (by the gap between them), one at a
    time from the top; the union is small only when both parts were. A lone run stays."""
    runs, small = list(runs), list(small)
    while len(runs) > 1 and any(small):
        k = small.index(True)
        gap_up = runs[k][0] - runs[k - 1][1] if k > 0 else None
        gap_down = runs[k + 1][0] - runs[k][1] if k + 1 < len(runs) else None
        j = k - 1 if gap_down is None or (gap_up is not None and gap_up <= gap_down) else k + 1
        a, b = sorted((j, k))
        runs[a:b + 1] = [(runs[a][0], runs[b][1])]
        small[a:b + 1] = [small[a] and small[b]]
    return runs


def run_shape(mask: np.ndarray, fill: int) -> tuple[int, float]:
    """(ink width, coverage) of a band of a binary mask: the span from its first to its last inked
    column, and the share of that span within ``fill`` columns of an inked one (a text line covers
    nearly all of its span; an operator's limits spread over a wide line cover little)."""
    cols = mask.any(0)
    idx = np.flatnonzero(cols)
    if not len(idx):
        return 0, 0.0
    span = cols[idx[0]:idx[-1] + 1]
    if fill:
        near = np.convolve(span.astype(np.int32), np.ones(2 * fill + 1, dtype=np.int32), mode="same") > 0
    else:
        near = span
    return int(len(span)), float(near.mean())


def segment(img: np.ndarray, spec: SegmentSpec = SegmentSpec()) -> list[np.ndarray]:
    """The lines of a grey formulation image, top to bottom, as float32 ink crops."""
    ink = to_ink(img)
    mask = ink > spec.threshold
    angle = skew_angle(mask, spec.max_skew_deg, spec.skew_steps)
    if angle:
        ink = shear(ink, angle)
        mask = ink > spec.threshold
    runs = row_runs(mask.sum(1), spec.min_row_ink)
    if not runs:
        return [ink]
    heights = [b - a for a, b in runs]
    typical = float(np.median([h for h in heights if h >= spec.min_height] or heights))
    shapes = [run_shape(mask[a:b], spec.fill) for a, b in runs]
    small = [h < spec.min_height or w < spec.min_width * typical or c < spec.min_cover
             for h, (w, c) in zip(heights, shapes)]
    runs = merge_runs(runs, small)
    out = []
    h, w = ink.shape
    for a, b in runs:
        cols = np.flatnonzero(mask[a:b].any(0))
        left, right = max(0, cols[0] - spec.margin), min(w, cols[-1] + 1 + spec.margin)
        top, bottom = max(0, a - spec.margin), min(h, b + spec.margin)
        out.append(ink[top:bottom, left:right])
    return out


def fit_height(line: np.ndarray, height: int, max_width: int) -> np.ndarray:
    """An ink crop resized to ``height`` rows keeping its aspect ratio (width at most
    ``max_width``, at least 4 columns); float32 in [0, 1]."""
    from PIL import Image

    if height < 4 or max_width < 4:
        raise ValueError(f"height and max_width must be >= 4, got {height}, {max_width}")
    h, w = line.shape
    nw = int(min(max_width, max(4, round(w * height / max(h, 1)))))
    im = Image.fromarray(np.clip(line * 255, 0, 255).astype(np.uint8)).resize((nw, height), Image.BILINEAR)
    return np.asarray(im, dtype=np.float32) / 255.0
