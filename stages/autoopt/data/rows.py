"""Building the dataset rows: formulation -> image, LaTeX, Pyomo, tags, optimum.

Shared by the prepare stage and the tests; nothing here imports torch or MLflow.
"""
from __future__ import annotations

import io
import json
from typing import Any

import numpy as np

from . import grammar
from .render import RenderSpec, render

SPLIT_STYLES = {"train": None, "validation": None, "test": "printed", "test_handwritten": "handwritten"}
# a different block of generator seeds per split: no formulation is shared between splits
SPLIT_OFFSETS = {"train": 0, "validation": 1, "test": 2, "test_handwritten": 3}
SEED_STRIDE = 10_000_000


def sample_seed(seed: int, split: str, i: int) -> int:
    return seed * 4 * SEED_STRIDE + SPLIT_OFFSETS[split] * SEED_STRIDE + i


def png_bytes(img: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def make_row(job: tuple) -> dict[str, Any]:
    """One sample: (seed, split, i, style, generator kwargs, render spec) -> a dataset row.
    The optimum of an LP/MILP is solved with HiGHS here; a planted one comes from the generator."""
    seed, split, i, style, gen_kwargs, spec = job
    s = sample_seed(seed, split, i)
    problem = grammar.generate(s, **gen_kwargs)
    latex, script = problem.latex(), problem.pyomo()
    if problem.meta.get("family") == "lp":
        optimum, source = grammar.solve_linear(script), "highs"
        if optimum is None:
            source = "none"
    elif problem.planted_value is not None:
        optimum, source = problem.planted_value, "planted"
    else:
        optimum, source = None, "none"
    if source != "highs":
        grammar.build_model(script)          # every script must build its model (raises if not)
    rng = np.random.default_rng(s)
    img = render(latex, style, rng, spec)
    return {"id": f"{split}-{i:06d}", "image": {"bytes": png_bytes(img), "path": None},
            "latex": latex, "pyomo": script, "style": style, "tags": tag_row(problem.tags()),
            "optimum": optimum, "optimum_source": source,
            "planted_point": json.dumps(problem.planted) if problem.planted else "",
            "height": int(img.shape[0]), "width": int(img.shape[1])}


def tag_row(tags: dict[str, Any]) -> dict[str, Any]:
    """The dataset's tags column. A formulation with none of the complexities is stored as
    ``["linear"]``, never an empty list (MLflow's dataset schema cannot type an empty list)."""
    return {"type": tags["type"], "sense": tags["sense"], "complexities": list(tags["complexities"]) or ["linear"],
            "n": int(tags["n"]), "integer": bool(tags["integer"]), "layout": tags["layout"],
            "family": tags["family"], "objectives": int(tags["objectives"]),
            "constraints": int(tags["constraints"])}


def features():
    import datasets

    v = datasets.Value
    return datasets.Features({
        "id": v("string"), "image": datasets.Image(), "latex": v("string"), "pyomo": v("string"),
        "style": v("string"),
        "tags": {"type": v("string"), "sense": v("string"),
                 "complexities": datasets.Sequence(v("string")), "n": v("int32"),
                 "integer": v("bool"), "layout": v("string"), "family": v("string"),
                 "objectives": v("int32"), "constraints": v("int32")},
        "optimum": v("float64"), "optimum_source": v("string"), "planted_point": v("string"),
        "height": v("int32"), "width": v("int32")})


def jobs(seed: int, split: str, count: int, handwritten_share: float, gen_kwargs: dict,
         spec: RenderSpec) -> list[tuple]:
    style = SPLIT_STYLES[split]
    rng = np.random.default_rng([seed, SPLIT_OFFSETS[split]])
    out = []
    for i in range(count):
        st = style or ("handwritten" if rng.random() < handwritten_share else "printed")
        out.append((seed, split, i, st, gen_kwargs, spec))
    return out


def card(rows_by_split: dict[str, list[dict]], source: str) -> dict[str, Any]:
    """Counts per split, type, complexity, style, optimum source; token lengths."""
    from collections import Counter

    from ..tokenizer import tokenize

    out: dict[str, Any] = {"source": source, "splits": {}}
    for split, rows in rows_by_split.items():
        lens = [len(tokenize(r["latex"])) for r in rows]
        out["splits"][split] = {
            "count": len(rows),
            "by_type": dict(sorted(Counter(r["tags"]["type"] for r in rows).items())),
            "by_complexity": dict(sorted(Counter(c for r in rows for c in
                                                 r["tags"]["complexities"]).items())),
            "by_style": dict(sorted(Counter(r["style"] for r in rows).items())),
            "by_optimum_source": dict(sorted(Counter(r["optimum_source"] for r in rows).items())),
            "max_n": max((r["tags"]["n"] for r in rows), default=0),
            "tokens_mean": float(np.mean(lens)) if lens else 0.0,
            "tokens_max": int(max(lens, default=0)),
        }
    return out


def card_markdown(c: dict[str, Any]) -> str:
    gen = c["source"] == "generated"
    lines = ["# autoopt dataset card", "",
             ("**Generated here, not the published AutoOpt-11k.** Formulations are drawn from "
              "`stages/autoopt/data/grammar.py` and rendered with matplotlib mathtext "
              "(`stages/autoopt/data/render.py`); 'handwritten' images are printed ones with a "
              "handwriting-like distortion, not handwriting.") if gen else
             "Read from the published AutoOpt-11k layout (style and Pyomo not in that layout).", ""]
    for split, s in c["splits"].items():
        lines += [f"## {split}: {s['count']} samples", "",
                  f"tokens per label: mean {s['tokens_mean']:.1f}, max {s['tokens_max']}; largest n {s['max_n']}", "",
                  "| by type | count |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in s["by_type"].items()]
        lines += ["", "| by complexity | count |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in s["by_complexity"].items()]
        lines += ["", "| by style | count |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in s["by_style"].items()]
        lines += ["", "| optimum known from | count |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in s["by_optimum_source"].items()]
        lines.append("")
    return "\n".join(lines)
