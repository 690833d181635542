"""Provenance of the claims: what git history says about each check (docs/VERDICTS.md, 4).

A claim's **check** is its metric, op, threshold, rule, baseline and control. It is fixed on the
day in its ``registered`` field, before a verdict seed ran it; a change after that day needs an
entry in ``revisions`` (date, change, why), and a claim whose meaning changes gets a new id: an
id is never reused for a different metric.

:func:`history` reads every committed version of a study's ``claims.yaml`` (``git log`` and one
``git cat-file --batch``), :func:`problems` checks the rules above against it and the working
tree's file, and :func:`first_seen` gives the day each claim's current check first appeared (what
``registered`` was backfilled from). ``tests/claimbench/test_provenance.py`` runs :func:`problems` on
every study; ``claimbench diff`` shows check changes beside verdict changes (:func:`check_of`).
"""
from __future__ import annotations

import datetime as dt
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CHECK_FIELDS = ("metric", "op", "threshold", "rule", "baseline", "control")
DEFAULTS = {"rule": "interval", "baseline": None, "control": None}


@dataclass(frozen=True)
class Version:
    commit: str
    date: dt.date          # the commit's date (committer's, UTC day)
    claims: dict[str, dict]  # id -> the claim's fields in that version


def check_of(claim: dict) -> tuple:
    """The fields that make a claim's check, with the contract's defaults filled in (a v1 claim
    has the rule and no baseline or control); a threshold compares as floats."""
    def norm(k: str, v: Any) -> Any:
        if k == "threshold":
            return tuple(float(x) for x in v) if isinstance(v, list) else float(v)
        return v
    return tuple(norm(k, claim.get(k, DEFAULTS.get(k))) for k in CHECK_FIELDS)


def describe_change(old: dict, new: dict) -> str:
    """'metric a -> b; threshold 1 -> 2' for the check fields that differ."""
    parts = []
    for k, a, b in zip(CHECK_FIELDS, check_of(old), check_of(new)):
        if a != b:
            parts.append(f"{k} {a} -> {b}")
    return "; ".join(parts)


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          input=stdin)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def is_shallow(root: Path) -> bool:
    return _git(root, "rev-parse", "--is-shallow-repository").strip() == "true"


def _parse(text: str) -> dict[str, dict]:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return {}
    claims = data.get("claims") if isinstance(data, dict) else None
    return {c["id"]: c for c in claims or [] if isinstance(c, dict) and "id" in c}


def history(root: Path, rel: str, rev: str = "HEAD") -> list[Version]:
    """Every committed version of ``rel`` reachable from ``rev``, oldest first (renames followed)."""
    log = _git(root, "log", "--follow", "--format=%H %cs", "--name-only", rev, "--", rel).split("\n")
    entries: list[tuple[str, str, str]] = []
    i = 0
    while i < len(log):
        line = log[i].strip()
        if line and " " in line and len(line.split()[0]) == 40:
            commit, day = line.split()
            j = i + 1
            while j < len(log) and not log[j].strip():
                j += 1
            path = log[j].strip() if j < len(log) else rel
            entries.append((commit, day, path))
            i = j + 1
        else:
            i += 1
    if not entries:
        return []
    batch = "".join(f"{c}:{p}\n" for c, _, p in entries)
    out = subprocess.run(["git", "cat-file", "--batch"], cwd=root, input=batch.encode(),
                         capture_output=True, check=True).stdout
    versions, pos = [], 0
    for commit, day, _ in entries:
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end].decode()
        if header.endswith("missing"):
            pos = header_end + 1
            continue
        size = int(header.split()[2])
        body = out[header_end + 1: header_end + 1 + size].decode()
        pos = header_end + 1 + size + 1
        versions.append(Version(commit, dt.date.fromisoformat(day), _parse(body)))
    return list(reversed(versions))


def first_seen(versions: list[Version], claim: dict) -> dt.date | None:
    """The day the claim's current check first appeared under its id: the date of the oldest
    version in the latest unbroken run of versions holding that check."""
    want, day = check_of(claim), None
    for v in reversed(versions):          # newest first
        old = v.claims.get(claim["id"])
        if old is None or check_of(old) != want:
            break
        day = v.date
    return day


def problems(versions: list[Version], current: dict[str, dict], where: str) -> list[str]:
    """What the provenance rules find in one study's claims: ``current`` is the working tree's
    file (id -> claim), ``versions`` its history."""
    out = []
    chain = [*versions, Version("working tree", dt.date.max, current)]
    for cid, claim in current.items():
        metrics = []                       # the metrics the id has named, in order
        for v in chain:
            c = v.claims.get(cid)
            if c is not None and (not metrics or metrics[-1] != c.get("metric")):
                metrics.append(c.get("metric"))
        renamed = [m for m in metrics[:-1] if m != claim.get("metric")]
        documented = " ".join(r.get("change", "") for r in claim.get("revisions") or [])
        reused = [m for m in renamed if m not in documented]
        if reused:
            out.append(f"{where}: claim id {cid!r} named metric {reused[0]!r} before and "
                       f"{claim.get('metric')!r} now: a different check needs a new id (or a "
                       f"revision entry naming {reused[0]!r}, if the metric was only renamed)")
        if claim.get("level") != "must":
            continue
        reg = claim.get("registered")
        if reg is None:
            out.append(f"{where}: must {cid!r} has no registered date")
            continue
        reg = reg if isinstance(reg, dt.date) else dt.date.fromisoformat(str(reg))
        changes, prev = [], None
        for v in chain:
            c = v.claims.get(cid)
            if c is None:
                prev = None
                continue
            if prev is not None and check_of(prev) != check_of(c) and v.date > reg:
                changes.append(f"{v.commit[:10]} ({v.date if v.date != dt.date.max else 'uncommitted'}): "
                               f"{describe_change(prev, c)}")
            prev = c
        revised = [r for r in claim.get("revisions") or []
                   if dt.date.fromisoformat(str(r.get("date"))) >= reg]
        if len(changes) > len(revised):
            out.append(f"{where}: must {cid!r} (registered {reg}) changed its check after registration "
                       f"{len(changes)} time(s) with {len(revised)} revision entr(ies): "
                       + "; ".join(changes))
    return out


def study_problems(root: Path, claims_yaml: Path) -> list[str]:
    rel = claims_yaml.relative_to(root).as_posix()
    return problems(history(root, rel), _parse(claims_yaml.read_text()), rel)


def backfill_registered(root: Path, claims_yaml: Path, known: dict[str, dt.date] | None = None) -> dict[str, dt.date]:
    """Give every claim of ``claims_yaml`` that has no ``registered`` date the day its current
    check first appeared in git history (``known`` overrides, by id: a check that moved to a new
    id keeps the day it was fixed under the old one). The file is rewritten with its comments and
    layout; returns {id: date written}. A claim not yet committed gets today's date."""
    rel = claims_yaml.relative_to(root).as_posix()
    versions = history(root, rel)
    from stages.common.runtime.params import round_trip_yaml

    y = round_trip_yaml()
    data = y.load(claims_yaml.read_text())
    written = {}
    for c in data["claims"]:
        if c.get("registered") is not None:
            continue
        day = (known or {}).get(c["id"]) or first_seen(versions, dict(c)) or dt.date.today()
        day = dt.date.fromordinal(day.toordinal())     # a fresh object: ruamel anchors shared ones
        keys = list(c.keys())
        c.insert(keys.index("level") if "level" in keys else len(keys), "registered", day)
        written[c["id"]] = day
    if written:
        import io

        buf = io.StringIO()
        y.dump(data, buf)
        from stages.common.io import write_text

        write_text(claims_yaml, buf.getvalue())
    return written
