"""``claimbench diff [REV]``: which claims changed between the ledger at a git revision and now.

Like ``dvc metrics diff``: it reads ``reports/claims.json`` at ``REV`` (default ``HEAD``, through
``git show REV:reports/claims.json``) and in the working tree, and prints one row per claim whose
verdict, measured figure or check changed, or that gained a revision entry, and per claim added or
removed; a changed check is printed with its old and new form and the revision entries that
explain it. Exit status 1 when a ``must`` claim stopped holding (holds to fails, inconclusive,
not specific or not run), else 0; 2 for a bad revision or a missing ledger (named).

A measured figure counts as changed when it differs by more than ``--rtol`` (relative, default
1e-6): float results differ in their last digits between machines (see FACTS) with every verdict
the same. ``--all`` lists unchanged claims too, ``--json`` prints the changes as JSON.

``--page`` also writes ``reports/claims-diff.html`` (git-ignored, never a DVC out): the ledger
page (reports/index.html) loads it in a hidden iframe and shows the comparison in its
"Changes since the last committed ledger" section. The comparison is kept out of the ledger
stage on purpose: git's HEAD is not a DVC dep, and a stage that read it would make ``dvc repro``
dishonest (see stages/ledger/page.py).
"""
from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

from .format import check_text, fmt, verdict_of

CLAIMS_JSON = "reports/claims.json"
DIFF_PAGE = "reports/claims-diff.html"


class DiffError(Exception):
    """A bad revision or a missing ledger: exit status 2, with this message."""


def ledger_at(root: Path, rev: str) -> list[dict]:
    """The rows of reports/claims.json at git revision ``rev``."""
    ok = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=root,
                        capture_output=True, text=True)
    if ok.returncode != 0:
        raise DiffError(f"unknown git revision {rev!r} in {root}")
    shown = subprocess.run(["git", "show", f"{rev}:{CLAIMS_JSON}"], cwd=root, capture_output=True, text=True)
    if shown.returncode != 0:
        raise DiffError(f"no {CLAIMS_JSON} at revision {rev!r}: nothing committed to compare with")
    return _parse(shown.stdout, f"{CLAIMS_JSON} at {rev}")


def ledger_here(root: Path) -> list[dict]:
    path = root / CLAIMS_JSON
    if not path.exists():
        raise DiffError(f"no {CLAIMS_JSON} in the working tree: run `dvc repro` (or the ledger stage) first")
    return _parse(path.read_text(), str(path))


def _parse(text: str, where: str) -> list[dict]:
    try:
        rows = json.loads(text)
        assert isinstance(rows, list) and all("study" in r and "id" in r for r in rows)
    except (ValueError, AssertionError):
        raise DiffError(f"{where} is not a claims ledger (a JSON list of claims)") from None
    return rows


def _close(a, b, rtol: float) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=rtol, abs_tol=0.0) or (math.isnan(a) and math.isnan(b))
    return a == b


def compare(old: list[dict], new: list[dict], rtol: float = 1e-6, unchanged: bool = False) -> list[dict]:
    """One dict per changed claim (every claim with ``unchanged``), in the new ledger's order,
    removed claims last: key, level, change, old/new verdict and measured (as text), must_broke."""
    before = {f"{r['study']}/{r['id']}": r for r in old}
    after = {f"{r['study']}/{r['id']}": r for r in new}
    out = []
    for key in [*after, *(k for k in before if k not in after)]:
        a, b = before.get(key), after.get(key)
        if a is None:
            change = "added"
        elif b is None:
            change = "removed"
        else:
            what = [w for w, same in (("verdict", verdict_of(a) == verdict_of(b)),
                                      ("measured", _close(a["measured"], b["measured"], rtol)),
                                      ("check", check_key(a) == check_key(b)),
                                      ("revised", len(a.get("revisions") or []) == len(b.get("revisions") or [])))
                    if not same]
            change = ", ".join(what)
            if not change and not unchanged:
                continue
        ref = b or a
        out.append({"key": key, "level": ref["level"], "change": change or "—",
                    "old_check": check_text(a) if a else "—", "new_check": check_text(b) if b else "—",
                    "revisions": [r for r in (b or {}).get("revisions") or []
                                  if r not in ((a or {}).get("revisions") or [])],
                    "old_verdict": verdict_of(a) if a else "—",
                    "new_verdict": verdict_of(b) if b else "—",
                    "old_measured": fmt(a["measured"]) if a else "—",
                    "new_measured": fmt(b["measured"]) if b else "—",
                    "must_broke": bool(a and b and ref["level"] == "must" and verdict_of(a) == "holds"
                                       and verdict_of(b) not in ("holds", "retired"))})
    return out


def check_key(r: dict) -> tuple:
    """What a row's check is: figure, op, threshold, rule and control (a v2 row's control is a
    dict with its metric; a v1 row has neither rule nor control)."""
    ctl = r.get("control")
    rule = r.get("rule") if r.get("contract", 1) == 2 else None
    return (r["metric"], r.get("baseline"), r["op"], json.dumps(r["threshold"]), rule,
            ctl.get("metric") if isinstance(ctl, dict) else ctl)


def table(changes: list[dict], rev: str) -> str:
    """A plain-text table, like ``dvc metrics diff``'s."""
    head = ["Claim", "Level", "Change", f"Verdict ({rev} → workspace)", f"Measured ({rev} → workspace)"]
    body = [[c["key"] + (" !" if c["must_broke"] else ""), c["level"], c["change"],
             f"{c['old_verdict']} → {c['new_verdict']}", f"{c['old_measured']} → {c['new_measured']}"]
            for c in changes]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in [head, *body]]
    for c in changes:                      # a changed check and its revisions, under the table
        if "check" in c["change"].split(", "):
            lines.append(f"  {c['key']}: check {c['old_check']}  →  {c['new_check']}"
                         + ("" if c["revisions"] else "  (no revision entry: see its claims.yaml)"))
        for r in c["revisions"]:
            lines.append(f"  {c['key']}: revised {r['date']}: {r['change']} (why: {r['why']})")
    return "\n".join(lines)


def run(root: Path, rev: str = "HEAD", rtol: float = 1e-6, show_all: bool = False, as_json: bool = False,
        page: bool = False) -> int:
    """What ``claimbench diff`` does; its exit status."""
    old, new = ledger_at(root, rev), ledger_here(root)
    changes = compare(old, new, rtol, unchanged=show_all)
    broke = [c["key"] for c in changes if c["must_broke"]]
    n_changed = sum(c["change"] != "—" for c in changes)
    if as_json:
        print(json.dumps(changes, indent=1))
    elif changes:
        print(table(changes, rev))
        print(f"\n{n_changed} claim(s) changed between {rev} and the working tree" +
              (f"; must claim(s) that went from holds to fails (marked !): {', '.join(broke)}" if broke else "."))
    else:
        print(f"No claim changed verdict or measured figure between {rev} and the working tree.")
    if page:
        from stages.common.io import write_text

        from .page import diff_page

        write_text(root / DIFF_PAGE, diff_page({"rev": rev, "changes": [c for c in changes if c["change"] != "—"],
                                                "must_broke": len(broke)}))
        print(f"wrote {DIFF_PAGE} (reports/index.html shows it)")
    return 1 if broke else 0
