"""Formulation images: matplotlib mathtext, one mathtext line per LaTeX line (``\\\\``).

``render(latex, style, rng)`` returns a grayscale uint8 array (white background, dark ink).
Printed style: a random font set (DejaVu Sans/Serif, Computer Modern, STIX, STIX Sans), size and
resolution, lines left-aligned or centred with random gaps. Handwriting-like style: the same
typesetting then per-line slant and baseline wobble, stroke-width jitter (grey dilation or a
thinner stroke), an elastic distortion (a smoothed random displacement field), a slight
rotation, blur and noise. It imitates the look of handwriting; it is not handwriting.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FONTSETS = ("dejavusans", "dejavuserif", "cm", "stix", "stixsans")


@dataclass(frozen=True)
class RenderSpec:
    fontsets: tuple[str, ...] = FONTSETS
    font_sizes: tuple[int, int] = (10, 14)   # points, inclusive range
    dpi: int = 90
    margin: int = 6


_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.mathtext import MathTextParser

        _PARSER = MathTextParser("agg")
    return _PARSER


def compact(latex: str) -> str:
    """Tokens joined without spaces (mathtext reads ``x _ { 2 }`` as x, then 2, not x_2); a
    space is kept only where a command is followed by a letter (``\\in x``)."""
    from ..tokenizer import tokenize

    out = ""
    for tok in tokenize(latex):
        if out and out[-1].isalpha() and tok[0].isalpha() and _ends_in_command(out):
            out += " "
        out += tok
    return out


def _ends_in_command(s: str) -> bool:
    i = len(s)
    while i > 0 and s[i - 1].isalpha():
        i -= 1
    return i > 0 and s[i - 1] == "\\" and i < len(s)


def split_lines(latex: str) -> list[str]:
    """The LaTeX lines of a formulation (split at ``\\\\``), each compacted for mathtext."""
    return [compact(ln) for ln in latex.split("\\\\") if ln.strip()]


def typeset_line(line: str, fontset: str, size: float, dpi: int) -> np.ndarray:
    """Ink coverage (float32 in [0, 1]) of one mathtext line."""
    import matplotlib
    from matplotlib.font_manager import FontProperties

    parser = _parser()
    with matplotlib.rc_context({"mathtext.fontset": fontset}):
        try:
            r = parser.parse(f"${line}$", dpi=dpi, prop=FontProperties(size=size))
        except ValueError as err:
            raise ValueError(f"mathtext cannot typeset {line!r}: {err}") from None
    return np.asarray(r.image, dtype=np.float32) / 255.0


def _stack(lines: list[np.ndarray], gaps: list[int], offsets: list[int], margin: int) -> np.ndarray:
    width = max(a.shape[1] + o for a, o in zip(lines, offsets)) + 2 * margin
    height = sum(a.shape[0] for a in lines) + sum(gaps) + 2 * margin
    canvas = np.zeros((height, width), dtype=np.float32)
    y = margin
    for a, g, o in zip(lines, gaps + [0], offsets):
        canvas[y:y + a.shape[0], margin + o:margin + o + a.shape[1]] = np.maximum(
            canvas[y:y + a.shape[0], margin + o:margin + o + a.shape[1]], a)
        y += a.shape[0] + g
    return canvas


def _slant(a: np.ndarray, shear: float) -> np.ndarray:
    """Shear a line horizontally (top moves right by ``shear`` x height)."""
    from scipy.ndimage import affine_transform

    h, w = a.shape
    pad = int(abs(shear) * h) + 1
    out_shape = (h, w + pad)
    # output (r, c) <- input (r, c + shear * r + offset): rows drift sideways with height
    matrix = np.array([[1.0, 0.0], [shear, 1.0]])
    offset = np.array([0.0, -shear * h if shear >= 0 else 0.0])
    return affine_transform(a, matrix, offset=offset, output_shape=out_shape, order=1)


def _elastic(a: np.ndarray, rng: np.random.Generator, alpha: float, sigma: float) -> np.ndarray:
    from scipy.ndimage import gaussian_filter, map_coordinates

    h, w = a.shape
    dx = gaussian_filter(rng.uniform(-1, 1, (h, w)), sigma) * alpha
    dy = gaussian_filter(rng.uniform(-1, 1, (h, w)), sigma) * alpha
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return map_coordinates(a, [rows + dy, cols + dx], order=1, mode="constant")


def render(latex: str, style: str, rng: np.random.Generator, spec: RenderSpec = RenderSpec()) -> np.ndarray:
    """Render a formulation; ``style`` is 'printed' or 'handwritten'."""
    if style not in ("printed", "handwritten"):
        raise ValueError(f"style must be 'printed' or 'handwritten', got {style!r}")
    fontset = spec.fontsets[int(rng.integers(len(spec.fontsets)))]
    size = float(rng.uniform(spec.font_sizes[0], spec.font_sizes[1]))
    lines = [typeset_line(ln, fontset, size, spec.dpi) for ln in split_lines(latex)]
    if not lines:
        raise ValueError("nothing to render: empty LaTeX")
    hand = style == "handwritten"
    if hand:
        from scipy.ndimage import shift as nd_shift

        lines = [_slant(a, float(rng.uniform(-0.25, 0.25))) for a in lines]
        lines = [nd_shift(a, (float(rng.uniform(-1.5, 1.5)), 0.0), order=1) for a in lines]
    centred = rng.random() < 0.3
    widest = max(a.shape[1] for a in lines)
    offsets = [((widest - a.shape[1]) // 2 if centred else int(rng.integers(0, 8 if k else 1)))
               for k, a in enumerate(lines)]
    gaps = [int(rng.integers(1, 7)) for _ in lines[:-1]]
    ink = _stack(lines, gaps, offsets, spec.margin)
    if hand:
        from scipy.ndimage import gaussian_filter, grey_dilation, rotate

        if rng.random() < 0.5:
            ink = grey_dilation(ink, size=(2, 2))          # thicker pen
        else:
            ink = np.clip(ink * rng.uniform(0.7, 1.0), 0, 1)  # lighter pen
        ink = _elastic(ink, rng, alpha=float(rng.uniform(1.0, 2.5)), sigma=float(rng.uniform(3.0, 5.0)))
        ink = rotate(ink, float(rng.uniform(-2.5, 2.5)), reshape=True, order=1, mode="constant")
        ink = gaussian_filter(ink, float(rng.uniform(0.3, 0.8)))
        paper = 1.0 - rng.uniform(0.0, 0.08)
        img = paper - ink * rng.uniform(0.75, 1.0) + rng.normal(0, rng.uniform(0.02, 0.07), ink.shape)
    else:
        img = 1.0 - ink
    return (np.clip(img, 0, 1) * 255).round().astype(np.uint8)


def to_input(img: np.ndarray, height: int, width: int) -> np.ndarray:
    """Fit an image into height x width (aspect kept, white padding right/bottom); float32 in
    [0, 1] with ink = 1 (what M1 and the retrieval baseline read)."""
    from PIL import Image

    h, w = img.shape[:2]
    if img.ndim == 3:
        img = np.asarray(Image.fromarray(img).convert("L"))
    scale = min(height / h, width / w, 1.0)
    nh, nw = max(1, int(round(h * scale))), max(1, int(round(w * scale)))
    small = np.asarray(Image.fromarray(img).resize((nw, nh), Image.BILINEAR), dtype=np.float32)
    out = np.zeros((height, width), dtype=np.float32)
    out[:nh, :nw] = 1.0 - small / 255.0
    return out
