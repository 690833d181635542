"""How the ledger writes a figure, a verdict and a check (shared by the page, claims.md and diff)."""
from __future__ import annotations

from stages.common.claims import VERDICTS, verdict_of  # noqa: F401 - the ledger's names for them


def fmt(x) -> str:
    if x is None:
        return "—"
    if isinstance(x, list):
        return "[" + ", ".join(fmt(v) for v in x) + "]"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def css_class(verdict: str) -> str:
    """The verdict as a CSS class / data attribute: ``not specific`` -> ``notspecific``."""
    return verdict.replace(" ", "")


def figure_name(r: dict) -> str:
    """What a claim judges: its metric, or for a comparative claim the paired difference
    ``metric - baseline``."""
    return f"{r['metric']} - {r['baseline']}" if r.get("baseline") else r["metric"]


def check_text(r: dict) -> str:
    """The check as one line: ``figure op threshold``."""
    return f"{figure_name(r)} {r['op']} {fmt(r['threshold'])}"


def figure_text(r: dict) -> str:
    """The measured figure: a v2 claim's mean over seeds with its 90 % interval, else the value."""
    iv = r.get("interval")
    if iv and r.get("n", 0) > 1 and iv[0] != iv[1]:
        return f"{fmt(r['measured'])} [{fmt(iv[0])}, {fmt(iv[1])}]"
    return fmt(r["measured"])
