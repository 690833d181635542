"""`claimbench diff`: the ledger at a git revision against the working tree's, in a temp git repo."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stages.ledger.diff import DiffError, compare, ledger_at, run

REPO = Path(__file__).resolve().parents[2]


def _row(study, cid, level, holds, measured, **kw):
    return {"study": study, "id": cid, "level": level, "holds": holds, "measured": measured,
            "metric": "x.y", "op": ">=", "threshold": 0.5, **kw}


OLD = [_row("a", "m1", "must", True, 0.9), _row("a", "s1", "should", False, 0.1),
       _row("b", "m2", "must", True, [1.0, 2.0]), _row("b", "gone", "should", True, 3.0)]


def _git(root, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path):
    """A git repo with two commits of reports/claims.json (OLD, then OLD with one figure nudged
    below the tolerance) and a working tree where one must claim broke."""
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    (tmp_path / "reports").mkdir()
    ledger = tmp_path / "reports/claims.json"
    _git(tmp_path, "init", "-q")
    ledger.write_text(json.dumps(OLD))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "first")
    nudged = [dict(r) for r in OLD]
    nudged[0]["measured"] = 0.9 * (1 + 1e-9)
    ledger.write_text(json.dumps(nudged))
    _git(tmp_path, "commit", "-qam", "second")
    now = [_row("a", "m1", "must", False, 0.4), _row("a", "s1", "should", True, 0.6),
           _row("b", "m2", "must", True, [1.0, 2.5]), _row("b", "new", "should", None, None)]
    ledger.write_text(json.dumps(now))
    return tmp_path


def test_compare_names_verdict_figure_added_removed():
    new = [_row("a", "m1", "must", False, 0.4), _row("a", "s1", "should", False, 0.1),
           _row("b", "m2", "must", True, [1.0, 2.5]), _row("b", "new", "should", None, None)]
    got = {c["key"]: c for c in compare(OLD, new)}
    assert set(got) == {"a/m1", "b/m2", "b/new", "b/gone"}          # a/s1 unchanged: not listed
    assert got["a/m1"]["change"] == "verdict, measured" and got["a/m1"]["must_broke"]
    assert got["a/m1"]["old_verdict"] == "holds" and got["a/m1"]["new_verdict"] == "fails"
    assert got["b/m2"]["change"] == "measured" and not got["b/m2"]["must_broke"]
    assert got["b/new"]["change"] == "added" and got["b/gone"]["change"] == "removed"
    assert len(compare(OLD, new, unchanged=True)) == 5


def test_a_changed_check_and_its_revision_are_reported(capsys):
    """A v2 row whose threshold moved (same verdict, same figure) is listed as a check change,
    with the revision entry that explains it; without one the table says so."""
    old = [_row("a", "m1", "must", None, 0.9, verdict="holds", contract=2, rule="interval",
                control={"metric": "x.ablation"}, revisions=[])]
    rev = {"date": "2026-12-06", "change": "threshold 0.5 -> 0.6", "why": "the paper's Table 2"}
    new = [dict(old[0], threshold=0.6, revisions=[rev])]
    (c,) = compare(old, new)
    assert c["change"] == "check, revised" and c["revisions"] == [rev]
    assert c["old_check"] == "x.y >= 0.5" and c["new_check"] == "x.y >= 0.6"
    from stages.ledger.diff import table

    text = table([c], "HEAD")
    assert "a/m1: check x.y >= 0.5  →  x.y >= 0.6" in text and "revised 2026-12-06: threshold 0.5 -> 0.6" in text
    (c,) = compare(old, [dict(old[0], threshold=0.6)])
    assert c["change"] == "check" and "no revision entry" in table([c], "HEAD")
    (c,) = compare(old, [dict(old[0], control={"metric": "x.other"})])
    assert c["change"] == "check"
    still = compare([_row("c", "m", "must", False, 0.1)], [_row("c", "m", "must", False, 0.2)])
    assert still[0]["change"] == "measured" and not still[0]["must_broke"]   # failed before: not a break


def test_a_figure_within_rtol_is_unchanged():
    nudged = [dict(r) for r in OLD]
    nudged[0]["measured"] = 0.9 * (1 + 1e-9)
    assert compare(OLD, nudged) == []
    assert [c["key"] for c in compare(OLD, nudged, rtol=1e-12)] == ["a/m1"]


def test_diff_against_head_and_head_1(repo, capsys):
    assert run(repo, "HEAD") == 1                                    # a/m1: must, holds -> fails
    out = capsys.readouterr().out
    assert "a/m1 !" in out and "holds → fails" in out and "b/new" in out and "b/gone" in out
    assert "must claim(s) that went from holds to fails (marked !): a/m1" in out
    assert run(repo, "HEAD~1", as_json=True) == 1
    changes = json.loads(capsys.readouterr().out)
    assert {c["key"] for c in changes} == {"a/m1", "a/s1", "b/m2", "b/new", "b/gone"}
    assert len(ledger_at(repo, "HEAD~1")) == 4


def test_no_must_broke_exits_zero(repo, capsys):
    (repo / "reports/claims.json").write_text(json.dumps(OLD))
    assert run(repo, "HEAD") == 0
    assert "No claim changed" in capsys.readouterr().out


def test_bad_rev_and_missing_ledgers(repo, tmp_path):
    with pytest.raises(DiffError, match="unknown git revision 'nope'"):
        run(repo, "nope")
    (repo / "other.txt").write_text("x")
    _git(repo, "rm", "-q", "--cached", "reports/claims.json")
    _git(repo, "add", "other.txt")
    _git(repo, "commit", "-qm", "no ledger")
    with pytest.raises(DiffError, match="no reports/claims.json at revision 'HEAD'"):
        run(repo, "HEAD")
    (repo / "reports/claims.json").unlink()
    with pytest.raises(DiffError, match="no reports/claims.json in the working tree"):
        run(repo, "HEAD~1")


def test_page_payload_for_the_ledger_page(repo):
    run(repo, "HEAD", page=True)
    text = (repo / "reports/claims-diff.html").read_text()
    payload = json.loads(text.split("parent.postMessage(", 1)[1].rsplit(", '*')", 1)[0])
    assert payload["kind"] == "claimbench-diff" and payload["rev"] == "HEAD" and payload["must_broke"] == 1
    assert {c["key"] for c in payload["changes"]} == {"a/m1", "a/s1", "b/m2", "b/new", "b/gone"}


def test_cli_exit_codes(repo):
    def cli(*args):
        env = {**os.environ, "PYTHONPATH": str(REPO)}       # this checkout's stages, run in the temp repo
        return subprocess.run([sys.executable, "-m", "claimbench.cli", "diff", *args], cwd=repo,
                              capture_output=True, text=True, env=env)

    assert cli().returncode == 1
    bad = cli("no-such-rev")
    assert bad.returncode == 2 and "unknown git revision 'no-such-rev'" in bad.stderr
