"""M1's line design: segment a formulation image into lines (``lines.py``), recognise each line
with the CRNN + CTC recogniser (``crnn.py``), join the lines' LaTeX with ``\\\\``.

Training pairs: the lines of a training image paired in order with the LaTeX lines of its label
(split at ``\\\\``), kept only when the segmentation finds as many lines as the label has, and the
line is wide enough for CTC to emit its tokens (``min_frames``). Nothing here reads a test split.
"""
from __future__ import annotations

import numpy as np

from .lines import SegmentSpec, fit_height, segment

LINE_BREAK = "\\\\"


def label_lines(latex: str) -> list[str]:
    """The LaTeX lines of a label, stripped (``a \\\\ b`` -> ``['a', 'b']``)."""
    return [ln.strip() for ln in latex.split(LINE_BREAK) if ln.strip()]


def join_lines(lines: list[str]) -> str:
    return f" {LINE_BREAK} ".join(ln for ln in lines if ln)


def image_lines(img: np.ndarray, height: int, max_width: int, spec: SegmentSpec = SegmentSpec()) -> list[np.ndarray]:
    """A grey image's lines, each fitted to ``height`` rows (float32 ink)."""
    return [fit_height(a, height, max_width) for a in segment(img, spec)]


def _grey(image) -> np.ndarray:
    return np.asarray(image.convert("L")) if hasattr(image, "convert") else np.asarray(image)


def split_lines(images, height: int, max_width: int, desc: str = "lines") -> list[list[np.ndarray]]:
    """Every image's fitted lines (a list per image)."""
    from tqdm import tqdm

    return [image_lines(_grey(im), height, max_width)
            for im in tqdm(images, desc=desc, mininterval=2, disable=len(images) < 500)]


def training_pairs(per_image: list[list[np.ndarray]], labels: list[str], vocab, subframes: int):
    """(line arrays, token id lists, stats): the lines of each image paired with its label's lines
    where the counts agree, less lines too narrow for their tokens under CTC."""
    from .crnn import WIDTH_STRIDE, min_frames

    xs, ys = [], []
    stats = {"images": len(labels), "images_paired": 0, "lines": 0, "too_narrow": 0}
    for lines, latex in zip(per_image, labels):
        labs = label_lines(latex)
        if len(lines) != len(labs):
            continue
        stats["images_paired"] += 1
        for a, lab in zip(lines, labs):
            ids = vocab.encode(lab)[1:-1]          # no <bos>/<eos> under CTC
            frames = -(-a.shape[1] // WIDTH_STRIDE) * subframes
            if not ids or min_frames(ids) > frames:
                stats["too_narrow"] += 1
                continue
            xs.append(a)
            ys.append(ids)
            stats["lines"] += 1
    return xs, ys, stats


def recognise(model, vocab, per_image: list[list[np.ndarray]], device, batch: int = 64) -> list[str]:
    """Greedy CTC LaTeX for each image: its lines recognised in width-sorted batches, joined."""
    import torch

    from .crnn import batch_images

    flat = [(k, j, a) for k, lines in enumerate(per_image) for j, a in enumerate(lines)]
    order = sorted(range(len(flat)), key=lambda i: flat[i][2].shape[1])
    texts: dict[tuple[int, int], str] = {}
    model.eval()
    with torch.no_grad():
        for s in range(0, len(order), batch):
            chunk = [flat[i] for i in order[s:s + batch]]
            x, w = batch_images([c[2] for c in chunk], model.cfg.height)
            for (k, j, _), ids in zip(chunk, model.greedy(x.to(device), w.to(device))):
                texts[(k, j)] = vocab.decode(ids)
    return [join_lines([texts[(k, j)] for j in range(len(lines))]) for k, lines in enumerate(per_image)]

