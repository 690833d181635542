"""Claims: what each study's ``claims.yaml`` asserts, and checking it against measured metrics.

Thresholds live in claims.yaml, never in code. A claim whose metric is missing (the study
did not run) gets ``measured: null`` and ``holds: null``.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from .params import ParamsError

Op = Literal[">=", ">", "<=", "<", "between"]


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    statement: str
    paper: str = Field(description="the paper's figure or statement")
    where: str = Field(description="where in the paper")
    metric: str = Field(description="dotted key into the study's metrics file")
    op: Op
    threshold: Union[float, list[float]]
    level: Literal["must", "should"]
    fidelity: Literal["faithful", "proxy", "stand-in"]
    why: str = ""
    note: str = Field("", description="what the figure means or what was tried, in words: "
                                      "figures belong in `context`, measured, not here")
    context: list[str] = Field(default_factory=list,
                               description="dotted metric keys shown beside the measured figure")

    @model_validator(mode="after")
    def _check(self) -> "Claim":
        if self.op == "between":
            if not (isinstance(self.threshold, list) and len(self.threshold) == 2
                    and self.threshold[0] <= self.threshold[1]):
                raise ValueError(f"claim {self.id}: op 'between' needs threshold [low, high]")
        elif isinstance(self.threshold, list):
            raise ValueError(f"claim {self.id}: op {self.op!r} needs a single number")
        if self.fidelity != "faithful" and not self.why.strip():
            raise ValueError(f"claim {self.id}: fidelity {self.fidelity!r} needs a one-line 'why'")
        return self


class ClaimsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    study: str
    paper: str
    metrics: str = Field(description="metrics file (relative to the repo root) the claims read")
    claims: list[Claim] = Field(min_length=1)


def load_claims(path: str | Path) -> ClaimsFile:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
        return ClaimsFile.model_validate(data)
    except Exception as exc:  # pydantic or yaml
        raise ParamsError(f"{path}: invalid claims file: {exc}") from None


def lookup(metrics: dict[str, Any], dotted: str) -> Any:
    cur: Any = metrics
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return None
    return cur


def _plain(x: Any) -> Any:
    """A context value for the ledger: numbers and short lists as they are, else its type."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, list) and len(x) <= 12 and all(isinstance(v, (int, float)) for v in x):
        return x
    return f"<{type(x).__name__}>"


def compare(value: float, op: str, threshold: float | list[float]) -> bool:
    if op == "between":
        lo, hi = threshold  # type: ignore[misc]
        return lo <= value <= hi
    return {">=": value >= threshold, ">": value > threshold,
            "<=": value <= threshold, "<": value < threshold}[op]  # type: ignore[operator]


def evaluate(cf: ClaimsFile, metrics: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One ledger row per claim (the keys of reports/claims.json)."""
    rows = []
    for c in cf.claims:
        raw = lookup(metrics or {}, c.metric)
        measured = float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else None
        if measured is not None and not math.isfinite(measured):
            measured = None
        holds = None if measured is None else bool(compare(measured, c.op, c.threshold))
        rows.append({
            "study": cf.study, "id": c.id, "statement": c.statement, "level": c.level,
            "metric": c.metric, "op": c.op, "threshold": c.threshold, "measured": measured,
            "holds": holds, "paper": c.paper, "where": c.where, "fidelity": c.fidelity,
            "why": c.why, "source": cf.paper, "note": c.note,
            "context": {k: _plain(lookup(metrics or {}, k)) for k in c.context},
        })
    return rows


def evaluate_file(claims_path: Path, root: Path) -> list[dict[str, Any]]:
    cf = load_claims(claims_path)
    mpath = root / cf.metrics
    metrics = json.loads(mpath.read_text()) if mpath.exists() else None
    return evaluate(cf, metrics)


def failed_musts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["level"] == "must" and r["holds"] is not True]
