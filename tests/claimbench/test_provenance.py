"""Provenance of the claims (docs/VERDICTS.md, section 4): every must's check is registered,
a change after registration has its revision, and no id is reused for a different metric. Runs
over git history of every study's claims.yaml, and on small planted histories."""
from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from stages.common.claims import load_claims
from claimbench.provenance import backfill_registered, first_seen, history, is_shallow, study_problems

REPO = Path(__file__).resolve().parents[2]
STUDIES = sorted(p.parent.name for p in REPO.glob("stages/*/claims.yaml"))


@pytest.mark.parametrize("study", STUDIES)
def test_study_claims_have_clean_provenance(study):
    if is_shallow(REPO):
        pytest.skip("a shallow clone has no history to check (git fetch --unshallow)")
    path = REPO / "stages" / study / "claims.yaml"
    assert study_problems(REPO, path) == []
    for c in load_claims(path).claims:
        assert c.registered is not None, f"{study}/{c.id} has no registered date"


# --------------------------------------------------------------------------------------
# planted histories
# --------------------------------------------------------------------------------------
def _claim(cid="c1", metric="m.a", threshold=1.0, registered="2026-01-10", **kw) -> dict:
    c = dict(id=cid, statement="s", paper="p", where="w", metric=metric, op=">=",
             threshold=threshold, level="must", fidelity="faithful")
    if registered:
        c["registered"] = registered
    c.update(kw)
    return c


class Repo:
    """A git repository whose commits carry the dates we give them."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir()
        self.git("init", "-q")
        self.path = root / "stages" / "s" / "claims.yaml"
        self.path.parent.mkdir(parents=True)

    def git(self, *args: str, date: str | None = None) -> None:
        env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@t"}
        if date:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{date}T12:00:00+00:00"
        subprocess.run(["git", *args], cwd=self.root, env=env, check=True, capture_output=True)

    def commit(self, claims: list[dict], date: str) -> None:
        self.write(claims)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", f"claims of {date}", date=date)

    def write(self, claims: list[dict]) -> None:
        self.path.write_text(yaml.safe_dump({"study": "s", "paper": "P", "metrics": "m.json",
                                             "claims": claims}, sort_keys=False))

    def problems(self) -> list[str]:
        return study_problems(self.root, self.path)


@pytest.fixture
def repo(tmp_path) -> Repo:
    return Repo(tmp_path / "repo")


def test_a_change_on_the_registration_day_is_free_and_after_it_needs_a_revision(repo):
    repo.commit([_claim(threshold=1.0)], "2026-01-09")
    repo.commit([_claim(threshold=2.0)], "2026-01-10")          # fixed on its registration day
    assert repo.problems() == []
    repo.commit([_claim(threshold=3.0)], "2026-01-12")          # planted: threshold moved, no revision
    (problem,) = repo.problems()
    assert "must 'c1' (registered 2026-01-10) changed its check after registration 1 time(s)" in problem
    assert "threshold 2.0 -> 3.0" in problem
    repo.commit([_claim(threshold=3.0, revisions=[{"date": "2026-01-12", "change": "threshold 2 -> 3",
                                                   "why": "the paper's Table 2 says 3"}])], "2026-01-13")
    assert repo.problems() == []


def test_an_uncommitted_change_counts_too(repo):
    repo.commit([_claim()], "2026-01-10")
    repo.write([_claim(op=">")])
    (problem,) = repo.problems()
    assert "uncommitted" in problem and "op >= -> >" in problem


def test_a_reused_id_fails_even_with_a_revision_that_does_not_name_the_old_metric(repo):
    repo.commit([_claim(metric="m.a")], "2026-01-10")
    repo.commit([_claim(metric="m.b", registered="2026-01-11")], "2026-01-11")   # planted: same id, new metric
    (problem,) = repo.problems()
    assert "claim id 'c1' named metric 'm.a' before and 'm.b' now" in problem
    repo.commit([_claim(metric="m.b", registered="2026-01-11", revisions=[
        {"date": "2026-01-12", "change": "a new key, same figure", "why": "tidy"}])], "2026-01-12")
    assert len(repo.problems()) == 1
    repo.commit([_claim(metric="m.b", registered="2026-01-11", revisions=[
        {"date": "2026-01-12", "change": "metric m.a renamed m.b (the same figure)", "why": "tidy"}])],
        "2026-01-13")
    assert repo.problems() == []


def test_a_must_needs_a_registered_date_and_a_should_does_not(repo):
    repo.commit([_claim(registered=None), _claim(cid="c2", level="should", registered=None)], "2026-01-10")
    assert repo.problems() == ["stages/s/claims.yaml: must 'c1' has no registered date"]


def test_first_seen_and_the_backfill(repo):
    repo.commit([_claim(registered=None), _claim(cid="c2", registered=None)], "2026-01-05")
    repo.commit([_claim(registered=None, threshold=2.0), _claim(cid="c2", registered=None)], "2026-01-07")
    repo.commit([_claim(registered=None, threshold=2.0), _claim(cid="c2", registered=None,
                                                              note="a note is not the check")], "2026-01-09")
    versions = history(repo.root, "stages/s/claims.yaml")
    assert [v.date for v in versions] == [dt.date(2026, 1, 5), dt.date(2026, 1, 7), dt.date(2026, 1, 9)]
    assert first_seen(versions, _claim(threshold=2.0)) == dt.date(2026, 1, 7)
    assert first_seen(versions, _claim(cid="c2")) == dt.date(2026, 1, 5)
    repo.path.write_text("# a comment that stays\n" + repo.path.read_text())
    written = backfill_registered(repo.root, repo.path)
    assert written == {"c1": dt.date(2026, 1, 7), "c2": dt.date(2026, 1, 5)}
    text = repo.path.read_text()
    assert text.startswith("# a comment that stays\n") and "registered: 2026-01-07" in text and "&id" not in text
    assert [c.registered for c in load_claims(repo.path).claims] == [dt.date(2026, 1, 7), dt.date(2026, 1, 5)]


def test_the_command(python_exe, sub_env):
    if is_shallow(REPO):
        pytest.skip("a shallow clone has no history to check")
    ok = subprocess.run([python_exe, "-m", "claimbench.cli", "provenance", "zipf_bigram"], cwd=REPO,
                        env=sub_env(), capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.startswith("ok: 1 claims file(s)"), ok.stdout + ok.stderr
    bad = subprocess.run([python_exe, "-m", "claimbench.cli", "provenance", "nope"], cwd=REPO,
                         env=sub_env(), capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no study 'nope'" in bad.stderr
