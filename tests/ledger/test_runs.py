"""runs.json (python -m stages.ledger.runs): every stage that computed a claim's figure has a
MLflow run or says why it has none; each claim names that run and the stage's dvc.lock entry;
the page says where the store that holds the runs is, the same on every machine."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from stages.ledger import runs as R
from stages.ledger.build import add_computed_by, load_runs, study_markdown, to_markdown
from stages.ledger.page import provenance, provenance_text, store_note, to_html

REPO = Path(__file__).resolve().parents[2]


def test_every_claim_computing_stage_has_a_run_or_says_why():
    """For the default profile, each study's claims name the stage the DAG says wrote their metrics
    file, and every stage that computed it (that one and all upstream) has a run or a reason."""
    rec = load_runs()["default"]
    assert R.unaccounted(rec) == []
    dag = R.claim_stages(REPO)
    recorded = {s: v["claims"] for s, v in rec["studies"].items() if "claims" in v}
    assert set(recorded) == set(dag), "run `python -m stages.ledger.runs`: a study's claims are not recorded"
    for study, c in dag.items():
        assert c["stage"], f"{study}: no stage writes {c['metrics']}"
        assert (recorded[study]["stage"], recorded[study]["computed_by"]) == (c["stage"], c["computed_by"]), study


def test_unaccounted_names_a_stage_with_neither_run_nor_reason():
    rec = {"studies": {"s": {"stages": {"s-train": {"run_id": "r1"}}, "no_run": {"s-prep": "  "},
                             "claims": {"stage": "s-eval", "computed_by": ["s-eval", "s-prep", "s-train"]}}}}
    assert R.unaccounted(rec) == ["s-eval", "s-prep"]          # missing, and a blank reason
    rec["studies"]["s"]["no_run"] = {"s-prep": "made elsewhere", "s-eval": "never run"}
    assert R.unaccounted(rec) == []


def test_runs_record_names_every_stage_of_the_dag():
    """runs.json lists, for the default profile, each stage the studies' dvc.yaml files define
    once (a run, or no run with why), and no stage they do not define."""
    studies = load_runs()["default"]["studies"]
    listed = [n for s in studies.values() for n in [*s["stages"], *s["no_run"]]]
    assert sorted(listed) == sorted(R.study_stages(REPO))
    for study, s in studies.items():
        assert abs(s["compute_s"] - sum(r["compute_s"] for r in s["stages"].values())) < 0.5, study
        assert all(r.get("host") and r.get("day") for r in s["stages"].values()), study
        assert "missing" not in s, f"{study}: `missing` without a reason is the old format"


def _run(rid, start, dep_md5, secs, status="FINISHED", profile="default", stage="s-train"):
    return NS(info=NS(run_id=rid, start_time=start, status=status), data=NS(
        tags={"dvc.stage": stage, "dep.x.py": dep_md5, "profile": profile, "claimbench.host": "box7"},
        metrics={"stage.compute_s": secs}))


class _Client:
    def __init__(self, runs):
        self.runs = runs

    def search_experiments(self):
        return [NS(experiment_id="1", name="s")]

    def search_runs(self, ids, filt, max_results):
        return self.runs


def test_runs_record_prefers_the_exact_run():
    runs = [_run("old-exact", 1, "aaa", 5.0), _run("newer-inexact", 2, "bbb", 7.0),
            _run("newest-failed", 3, "aaa", 1.0, status="FAILED"), _run("smoke", 4, "aaa", 1.0, profile="smoke")]
    got = R.matching_runs(_Client(runs), {"s-train": {"x.py": "aaa"}}, "default")
    assert got["s-train"]["run_id"] == "old-exact" and got["s-train"]["exact"]
    assert got["s-train"]["host"] == "box7" and got["s-train"]["day"] == "1970-01-01"
    got = R.matching_runs(_Client(runs), {"s-train": {"x.py": "ccc"}}, "default")
    assert got["s-train"]["run_id"] == "newer-inexact" and not got["s-train"]["exact"]
    assert json.dumps(got)     # serialisable as written to runs.json


def test_record_says_why_a_stage_has_no_run(monkeypatch, tmp_path):
    """A stage run elsewhere (no run in the store read), one whose runs all failed, one never run:
    each is listed under no_run with its reason, none left out."""
    stages = {"s-prep": {"a": "1"}, "s-train": {"x.py": "aaa"}, "s-eval": {"b": "2"}, "s-new": {}}
    monkeypatch.setattr(R, "study_stages", lambda root: stages)
    monkeypatch.setattr(R, "claim_stages", lambda root: {"s": {"metrics": "reports/s/metrics.json", "stage": "s-eval",
                                                              "lock_path": "reports/s/metrics.json", "md5": "m",
                                                              "computed_by": ["s-eval", "s-prep", "s-train"]}})
    client = _Client([_run("r1", 86_400_000, "aaa", 5.0),
                      _run("r2", 2, "bbb", 1.0, status="FAILED", stage="s-eval")])
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    rec = R.record(tmp_path, [uri], "default", clients={uri: client})
    s = rec["studies"]["s"]
    assert list(s["stages"]) == ["s-train"] and s["stages"]["s-train"]["day"] == "1970-01-02"
    assert "none FINISHED" in s["no_run"]["s-eval"]
    assert "another checkout" in s["no_run"]["s-prep"] and "mlruns.db" in s["no_run"]["s-prep"]
    assert s["no_run"]["s-new"].startswith("never run")
    assert rec["store"] == {"read": ["mlruns.db"], "hosts": ["box7"], "days": ["1970-01-02"]}
    assert R.unaccounted(rec) == [] and str(tmp_path) not in json.dumps(rec)   # no machine path committed


def _store(path: Path, ids: list[str]) -> None:
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE runs (run_uuid TEXT PRIMARY KEY)")
        con.executemany("INSERT INTO runs VALUES (?)", [(i,) for i in ids])


RUNS = {"default": {"commit": "0123456789abcdef", "store": {"hosts": ["box7"], "days": ["2026-12-01", "2026-12-03"]},
                    "studies": {"s": {"compute_s": 3.0, "no_run": {"s-prep": "made in another checkout"},
                                      "stages": {"s-eval": {"run_id": "r-eval", "experiment": "s", "exact": True,
                                                            "compute_s": 1.0, "host": "box7", "day": "2026-12-03"},
                                                 "s-train": {"run_id": "r-train", "experiment": "s", "exact": True,
                                                             "compute_s": 2.0, "host": "box7", "day": "2026-12-01"}},
                                      "claims": {"metrics": "reports/s/metrics.json", "stage": "s-eval",
                                                 "lock_path": "reports/s/metrics.json", "md5": "a" * 32,
                                                 "computed_by": ["s-eval", "s-prep", "s-train"]}}}}}


def test_check_says_whether_this_checkout_holds_the_runs(tmp_path, capsys):
    """Said at run time, from the checkout's mlruns.db read-only: none, some, all."""
    (tmp_path / "stages/ledger").mkdir(parents=True)
    (tmp_path / R.RUNS_JSON).write_text(json.dumps(RUNS))
    st = R.local_store(tmp_path, RUNS)
    assert st == {"db": str(tmp_path / "mlruns.db"), "exists": False, "named": 2, "held": 0}
    text = R.store_text(st, RUNS)
    assert "host box7, 2026-12-01 to 2026-12-03" in text and "no copy" in text and "dvc repro" in text
    assert "MLFLOW_TRACKING_URI" in text
    _store(tmp_path / "mlruns.db", ["r-eval", "other"])
    assert R.local_store(tmp_path, RUNS)["held"] == 1
    assert "holds 1 of them" in R.store_text(R.local_store(tmp_path, RUNS), RUNS)
    with sqlite3.connect(tmp_path / "mlruns.db") as con:
        con.execute("INSERT INTO runs VALUES ('r-train')")
    assert R.main(["--check", "--root", str(tmp_path)]) == 0
    assert "holds all 2 runs" in capsys.readouterr().out
    assert json.loads((tmp_path / R.RUNS_JSON).read_text()) == RUNS            # --check writes nothing


ROW = {"study": "s", "id": "c1", "level": "must", "holds": True, "fidelity": "faithful", "why": "",
       "measured": 0.5, "metric": "a.b", "op": ">=", "threshold": 0.4, "statement": "claim c1", "paper": "0.9",
       "where": "Fig. 1", "note": "", "context": {}, "source": "Author, Paper (NeurIPS 2025)", "profile": "default"}


def test_each_claim_names_its_stage_lock_entry_and_run():
    rows = [dict(ROW)]
    add_computed_by(rows, RUNS, "default", {"s": "a" * 32})
    assert rows[0]["computed_by"] == {
        "metrics": "reports/s/metrics.json", "stage": "s-eval",
        "dvc_lock": {"path": "reports/s/metrics.json", "md5": "a" * 32}, "run_id": "r-eval", "host": "box7",
        "day": "2026-12-03", "no_run": None, "upstream_runs": {"s-prep": None, "s-train": "r-train"}, "stale": False}
    page = to_html(rows, "default", "T", {}, RUNS, {}, {"s": "a" * 32})
    assert "<dt>computed by</dt><dd>stage s-eval (dvc.lock: reports/s/metrics.json md5 " + "a" * 32 + \
        "), MLflow run r-eval (host box7, 2026-12-03)</dd>" in page
    assert "s-prep: <b>no run</b>: made in another checkout" in page
    md = to_markdown(rows, "default", {}, RUNS)
    assert "| s | stage s-eval (dvc.lock: reports/s/metrics.json md5 " in md and "s-prep: no run (made in another checkout)" in md
    assert "Computed by: stage s-eval" in study_markdown("s", rows, "default",
                                                         provenance_text(provenance("s", RUNS, "default")))


def test_a_metrics_file_newer_than_the_record_is_flagged_stale():
    rows = [dict(ROW)]
    add_computed_by(rows, RUNS, "default", {"s": "b" * 32})
    assert rows[0]["computed_by"]["stale"] is True
    assert "STALE" in to_html(rows, "default", "T", {}, RUNS, {}, {"s": "b" * 32})
    assert "STALE" not in to_html(rows, "default", "T", {}, RUNS, {}, {"s": "a" * 32})


def test_a_stage_without_a_run_is_named_at_the_claim():
    runs = json.loads(json.dumps(RUNS))
    s = runs["default"]["studies"]["s"]
    s["no_run"]["s-eval"] = "made on another machine"
    del s["stages"]["s-eval"]
    assert provenance_text(provenance("s", runs, "default")).endswith("no MLflow run: made on another machine")
    rows = [dict(ROW)]
    add_computed_by(rows, runs, "default", {})
    assert rows[0]["computed_by"]["run_id"] is None and rows[0]["computed_by"]["no_run"] == "made on another machine"


@pytest.mark.parametrize("db", [False, True])
def test_the_page_says_where_the_store_is_the_same_on_every_machine(tmp_path, monkeypatch, db):
    """The committed page must be byte-identical wherever it is built: the store note is the same
    whether or not the building checkout has an mlruns.db, and names host and days."""
    monkeypatch.chdir(tmp_path)
    if db:
        _store(tmp_path / "mlruns.db", ["r-eval", "r-train"])
    page = to_html([dict(ROW)], "default", "T", {}, RUNS, {})
    note = store_note(RUNS, "default")
    assert "host box7, 2026-12-01 to 2026-12-03" in note and "a clone has no copy" in note
    assert "dvc repro" in note and "MLFLOW_TRACKING_URI" in note and "--check" in note
    assert "a clone has no copy of it" in page and "<code>python -m stages.ledger.runs --check</code>" in page
    assert page == to_html([dict(ROW)], "default", "T", {}, RUNS, {})


def test_the_ledger_stage_reads_no_store():
    """The ledger stage never opens the MLflow store (nor imports MLflow): that is runs.py's job."""
    for f in ("build.py", "page.py", "format.py"):
        text = (REPO / "stages/ledger" / f).read_text()
        assert "import mlflow" not in text and "from mlflow" not in text and "sqlite3" not in text, f
