"""Claims: what each study's ``claims.yaml`` asserts, and judging it against measured metrics.

Two versions of the contract load here (docs/VERDICTS.md):

* **v2** (``contract: 2`` at the top of claims.yaml): a claim is judged over the verdict seeds
  (``common.seeds`` of the profile) from the study's ``per_seed`` metrics, by its ``rule``
  (:func:`stages.common.inference.judge`). ``baseline`` makes it comparative: the judged figure is
  the paired per-seed difference ``metric - baseline`` (A and B ran on the same seed). ``control``
  names the arm with the paper's contribution taken out, judged by the same rule and threshold:
  a claim whose control holds too is ``not specific``. Every must has a ``control`` or says why
  not (``why_no_control``). ``registered`` is the day the check was fixed, before a verdict seed
  ran it; a later change to it is a ``revisions`` entry. A ``retired`` claim keeps its last
  figure and is not judged.
* **v1** (no ``contract``): one measured figure against the threshold. Its rows are labelled
  ``1 seed`` and counted apart, until its study moves to v2.

Verdicts: holds, fails, inconclusive, not specific, not run, retired. Thresholds live in
claims.yaml, never in code. A claim whose metric is missing (the study did not run) is ``not run``.
"""
from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any, Literal, Optional, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from stages.common.base import ParamsError

Op = Literal[">=", ">", "<=", "<", "between"]
Rule = Literal["interval", "every_seed", "equivalence"]

# the verdicts of the claims contract (docs/VERDICTS.md, section 5), in the order the ledger
# lists them; a `retired` claim keeps its last figure and is never judged again
VERDICTS = ("holds", "fails", "inconclusive", "not specific", "not run", "retired")
_V1 = {True: "holds", False: "fails", None: "not run"}


def verdict_of(row: dict) -> str:
    """A ledger row's verdict: its ``verdict``, or, for a ledger written before verdicts had names
    (a committed ``claims.json`` that ``claimbench diff`` reads), its ``holds`` (true / false / null)."""
    if "verdict" in row:
        return row["verdict"]
    return _V1[row.get("holds")]


class Revision(BaseModel):
    """A change to a registered check: when, what, and why (citing the paper)."""
    model_config = ConfigDict(extra="forbid")

    date: dt.date
    change: str = Field(min_length=1)
    why: str = Field(min_length=1)


class Retired(BaseModel):
    """A claim no longer judged (its check was replaced under a new id): its last figure stays."""
    model_config = ConfigDict(extra="forbid")

    date: dt.date
    why: str = Field(min_length=1)
    last_measured: Union[float, list[float], None] = None
    last_verdict: Literal["holds", "fails", "inconclusive", "not specific", "not run"]


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
    registered: Optional[dt.date] = Field(None, description="the day this check was fixed")
    revisions: list[Revision] = Field(default_factory=list)
    retired: Optional[Retired] = None

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


class ClaimV2(Claim):
    """A claim of the contract v2 (see the module docstring)."""

    rule: Rule = "interval"
    baseline: Optional[str] = Field(None, description="B's metric: the judged figure is metric - baseline, per seed")
    control: Optional[str] = Field(None, description="the metric of the arm without the paper's contribution")
    why_no_control: str = ""
    deterministic: bool = Field(False, description="the figure does not depend on the seed")
    constant_why: str = Field("", description="why a figure that depends on the seed came out the same on "
                              "every verdict seed (a floor or a ceiling, e.g. no success on any seed): "
                              "the ledger then does not flag it as a stage that ignores its seed")
    registered: dt.date

    @model_validator(mode="after")
    def _check_v2(self) -> "ClaimV2":
        if self.rule == "equivalence" and self.op != "between":
            raise ValueError(f"claim {self.id}: rule 'equivalence' needs op 'between' with [low, high]")
        if self.control and self.why_no_control.strip():
            raise ValueError(f"claim {self.id}: give a control or why_no_control, not both")
        if self.level == "must" and not self.control and not self.why_no_control.strip():
            raise ValueError(f"claim {self.id}: a must names its control (the arm without the paper's "
                             f"contribution) or says why it has none (why_no_control)")
        for r in self.revisions:
            if r.date < self.registered:
                raise ValueError(f"claim {self.id}: revision of {r.date} is before its registration "
                                 f"({self.registered})")
        return self


class ClaimsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    study: str
    paper: str
    metrics: str = Field(description="metrics file (relative to the repo root) the claims read")
    contract: Literal[1] = 1
    claims: list[Claim] = Field(min_length=1)


class ClaimsFileV2(ClaimsFile):
    contract: Literal[2]
    claims: list[ClaimV2] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> "ClaimsFileV2":
        ids = [c.id for c in self.claims]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"claim ids used twice: {', '.join(dup)}")
        return self


def yaml_error_message(path: Path, err: Exception) -> str:
    """A YAML parse error as one line a person acts on: the file, the line and column, what the
    parser expected, and how to get the committed file back."""
    mark = getattr(err, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    import os

    shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
    return (f"{shown}: not valid YAML{where}: {problem}. Fix that line, or restore the committed "
            f"file with `git checkout -- {shown}`")


def load_claims(path: str | Path) -> ClaimsFile:
    """A study's claims file, v1 or v2 by its ``contract`` key; a ParamsError naming the file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ParamsError(yaml_error_message(path, exc)) from None
    try:
        model = ClaimsFileV2 if isinstance(data, dict) and data.get("contract") == 2 else ClaimsFile
        return model.model_validate(data)
    except Exception as exc:  # pydantic
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


from stages.common.inference import compare  # noqa: E402 - one comparison for the ledger and the rules


def _number(raw: Any) -> float | None:
    """A finite float, or None (missing, boolean, non-numeric or non-finite)."""
    if isinstance(raw, (int, float)) and not isinstance(raw, bool) and math.isfinite(raw):
        return float(raw)
    return None


def _common_fields(cf: ClaimsFile, c: Claim, metrics: dict[str, Any]) -> dict[str, Any]:
    return {"study": cf.study, "id": c.id, "statement": c.statement, "level": c.level,
            "metric": c.metric, "op": c.op, "threshold": c.threshold, "paper": c.paper,
            "where": c.where, "fidelity": c.fidelity, "why": c.why, "source": cf.paper,
            "note": c.note, "context": {k: _plain(lookup(metrics, k)) for k in c.context},
            "registered": c.registered.isoformat() if c.registered else None,
            "revisions": [{"date": r.date.isoformat(), "change": r.change, "why": r.why}
                          for r in c.revisions]}


def evaluate(cf: ClaimsFile, metrics: dict[str, Any] | None,
             seeds: list[int] | None = None) -> list[dict[str, Any]]:
    """One ledger row per claim (the keys of reports/claims.json). ``seeds`` are the verdict
    seeds of the profile (v2 claims); by default the seeds the metrics file holds."""
    if isinstance(cf, ClaimsFileV2):
        return [_evaluate_v2(cf, c, metrics or {}, seeds) for c in cf.claims]
    rows = []
    for c in cf.claims:
        if c.retired:
            rows.append({**_common_fields(cf, c, {}), "contract": 1, "rule": "1 seed", "n": 0,
                         **_retired_fields(c)})
            continue
        measured = _number(lookup(metrics or {}, c.metric))
        verdict = "not run" if measured is None else (
            "holds" if compare(measured, c.op, c.threshold) else "fails")
        rows.append({**_common_fields(cf, c, metrics or {}), "contract": 1, "rule": "1 seed",
                     "n": 0 if measured is None else 1, "measured": measured, "verdict": verdict})
    return rows


def _retired_fields(c: Claim) -> dict[str, Any]:
    """A retired claim's row: its last figure and verdict, never judged again."""
    r = c.retired
    return {"verdict": "retired", "measured": r.last_measured,
            "retired": {"date": r.date.isoformat(), "why": r.why, "last_verdict": r.last_verdict}}


def per_seed_values(metrics: dict[str, Any], key: str, seeds: list[int],
                    deterministic: bool = False) -> list[float | None]:
    """``key`` on each verdict seed, from the metrics file's ``per_seed`` section; a
    deterministic figure may instead be one top-level value (then a list of one)."""
    per = metrics.get("per_seed") or {}
    values = [_number(lookup(per.get(str(s), {}), key)) for s in seeds]
    if deterministic and all(v is None for v in values):
        return [_number(lookup(metrics, key))]
    return values


def _arm(metrics: dict, c: ClaimV2, metric: str, seeds: list[int]) -> tuple[list, list, list | None]:
    """(judged per-seed figures, the arm's per-seed values, the baseline's or None) for ``metric``
    as the A arm."""
    a = per_seed_values(metrics, metric, seeds, c.deterministic)
    if not c.baseline:
        return a, a, None
    b = per_seed_values(metrics, c.baseline, seeds, c.deterministic)
    if len(a) != len(b):
        return [None], a, b
    return [None if x is None or y is None else x - y for x, y in zip(a, b)], a, b


def _judged(values: list, c: ClaimV2, seeds: list[int]) -> dict[str, Any]:
    from stages.common.inference import judge

    j = judge(values, c.op, c.threshold, c.rule)
    shown = seeds if len(values) == len(seeds) else ["all"]
    return {"verdict": j.verdict, "n": j.n, "mean": j.mean, "sd": j.sd, "interval":
            list(j.interval) if j.interval else None, "method": j.method, "passing": j.passing,
            "tost_p": j.tost_p, "per_seed": {str(s): v for s, v in zip(shown, values)}}


def _evaluate_v2(cf: ClaimsFileV2, c: ClaimV2, metrics: dict[str, Any],
                 seeds: list[int] | None) -> dict[str, Any]:
    row = {**_common_fields(cf, c, metrics), "contract": 2, "rule": c.rule, "baseline": c.baseline,
           "deterministic": c.deterministic, "why_no_control": c.why_no_control,
           "seeds": None, "per_seed": None, "n": 0, "mean": None, "sd": None, "interval": None,
           "method": None, "effect": None, "control": None, "constant": False}
    if c.retired:
        return {**row, **_retired_fields(c)}
    if seeds is None:
        seeds = sorted(int(s) for s in (metrics.get("per_seed") or {}))
    values, a, b = _arm(metrics, c, c.metric, seeds)
    own = _judged(values, c, seeds)
    row.update(own, seeds=list(seeds), measured=own["mean"])
    if b is not None and own["verdict"] != "not run":
        from stages.common.inference import paired_effect

        row["effect"] = paired_effect(a, b)
    row["constant"] = bool(own["n"] >= 2 and own["sd"] == 0.0 and not c.deterministic
                           and c.rule != "every_seed" and not c.constant_why.strip())
    verdict = own["verdict"]
    if c.control:
        ctl = _judged(_arm(metrics, c, c.control, seeds)[0], c, seeds)
        row["control"] = {"metric": c.control, **ctl}
        if verdict == "holds" and ctl["verdict"] == "holds":
            verdict = "not specific"          # the check passes without the paper's contribution
        elif verdict == "holds" and ctl["verdict"] == "not run":
            verdict = "not run"               # specificity unknown: the control did not run
    row["verdict"] = verdict
    return row


def evaluate_file(claims_path: Path, root: Path, seeds: list[int] | None = None) -> list[dict[str, Any]]:
    cf = load_claims(claims_path)
    mpath = root / cf.metrics
    metrics = json.loads(mpath.read_text()) if mpath.exists() else None
    return evaluate(cf, metrics, seeds)


def failed_musts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The must rows that do not hold (fails, inconclusive, not specific, not run); retired
    claims are no longer checked."""
    return [r for r in rows if r["level"] == "must" and verdict_of(r) not in ("holds", "retired")]
