"""Reader of the published AutoOpt-11k layout (Kaggle ``ankurzing/autoopt-11k``).

The authors' loader (Shobhit1201/AutoOpt, ``mydatasets/donut_dataset.py`` and
``config/base.yaml``) reads, per split folder ``train``, ``valid`` and ``test``::

    <split>/Images/<idx>.png     the formulation image
    <split>/Latex.txt            line idx (0-based, split on newlines) = the LaTeX of image idx

The layout says nothing about whether an image is handwritten or printed, nor holds the Pyomo
scripts (a separate 1,018-script subset), so those columns are empty here (style 'unknown').
"""
from __future__ import annotations

from pathlib import Path

SPLITS = {"train": "train", "valid": "validation", "test": "test"}
HOW_TO_GET = ("download AutoOpt-11k from Kaggle (`kaggle datasets download ankurzing/autoopt-11k`, "
              "or https://www.kaggle.com/datasets/ankurzing/autoopt-11k), unzip it, and point "
              "autoopt.<profile>.prepare.published_path at the folder that holds train/, valid/ "
              "and test/ (or keep `source: generated`, the default, which builds the data here)")


class PublishedDataError(FileNotFoundError):
    """The published data is missing or not in the published layout."""


def read_split(folder: Path, limit: int = 0) -> list[tuple[int, Path, str]]:
    """(idx, image path, LaTeX) for every ``Images/<idx>.png`` of one split folder, by idx."""
    images, labels = folder / "Images", folder / "Latex.txt"
    if not images.is_dir() or not labels.is_file():
        raise PublishedDataError(f"{folder}: expected Images/ and Latex.txt (the AutoOpt-11k "
                                 f"layout); {HOW_TO_GET}")
    lines = labels.read_text(encoding="utf-8").split("\n")
    rows = []
    for png in images.glob("*.png"):
        if not png.stem.isdigit():
            raise PublishedDataError(f"{png}: image names must be <idx>.png (idx = line of Latex.txt)")
        idx = int(png.stem)
        if idx >= len(lines) or not lines[idx].strip():
            raise PublishedDataError(f"{png}: Latex.txt has no line {idx} (it has {len(lines)} lines)")
        rows.append((idx, png, lines[idx].strip()))
    if not rows:
        raise PublishedDataError(f"{images}: no <idx>.png images; {HOW_TO_GET}")
    rows.sort()
    return rows[:limit] if limit else rows


def load_published(path: str | Path, limit: int = 0) -> dict[str, list[tuple[int, Path, str]]]:
    """Every split of the published layout under ``path``; a clear error when it is missing."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise PublishedDataError(f"AutoOpt-11k not found at {root}: {HOW_TO_GET}")
    missing = [s for s in SPLITS if not (root / s).is_dir()]
    if missing:
        raise PublishedDataError(f"{root}: missing split folder(s) {', '.join(missing)} "
                                 f"(expected train/, valid/, test/); {HOW_TO_GET}")
    return {SPLITS[s]: read_split(root / s, limit) for s in SPLITS}
