"""Plot helpers: every plot is a PNG (for people, MLflow and the offline report) and, where
DVC should render it, a CSV of the plotted numbers (declared under ``plots`` in dvc.yaml).
"""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any, Iterable

from stages.common.io import write_bytes, write_text


def new_figure(*args: Any, **kwargs: Any):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


def save_png(fig: Any, path: str | os.PathLike, dpi: int = 110) -> Path:
    """Write ``fig`` atomically as PNG and close it."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return write_bytes(path, buf.getvalue())


def write_csv(path: str | os.PathLike, rows: Iterable[dict[str, Any]]) -> Path:
    """Plot data for DVC: one header line, one row per point."""
    rows = list(rows)
    if not rows:
        raise ValueError(f"{path}: no rows to write")
    fields = list(rows[0])
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    return write_text(path, buf.getvalue())
