"""How the ledger writes a figure, a verdict and a check (shared by the page, claims.md and diff)."""
from __future__ import annotations


def fmt(x) -> str:
    if x is None:
        return "—"
    if isinstance(x, list):
        return "[" + ", ".join(fmt(v) for v in x) + "]"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def verdict(holds) -> str:
    return {True: "holds", False: "fails", None: "not run"}[holds]


def check_text(r: dict) -> str:
    return f"{r['metric']} {r['op']} {fmt(r['threshold'])}"
