"""stages.common.claims and `claimbench check`: comparisons, ledger rows, validation, exit codes."""
from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from stages.common.claims import (Claim, ClaimsFile, compare, evaluate, evaluate_file,
                                  failed_musts, load_claims, lookup)
from stages.common.runtime.params import ParamsError

REPO = Path(__file__).resolve().parents[2]


def _claim(**kw) -> dict:
    base = dict(id="c1", statement="s", paper="p", where="w", metric="a.b", op=">=",
                threshold=1.0, level="must", fidelity="faithful")
    base.update(kw)
    return base


def _file(*claims: dict) -> ClaimsFile:
    return ClaimsFile(study="s", paper="P", metrics="m.json", claims=list(claims))


# --------------------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, op, thr, expected", [
    (1.0, ">=", 1.0, True), (0.999, ">=", 1.0, False), (2.0, ">=", 1.0, True),
    (1.0, ">", 1.0, False), (1.001, ">", 1.0, True),
    (1.0, "<=", 1.0, True), (1.001, "<=", 1.0, False),
    (1.0, "<", 1.0, False), (0.999, "<", 1.0, True),
    (0.8, "between", [0.8, 1.1], True), (1.1, "between", [0.8, 1.1], True),
    (0.95, "between", [0.8, 1.1], True), (0.7999, "between", [0.8, 1.1], False),
    (1.1001, "between", [0.8, 1.1], False),
])
def test_compare_ops_and_boundaries(value, op, thr, expected):
    """Each op at, just inside and just outside its threshold (between is inclusive at both ends)."""
    assert compare(value, op, thr) is expected


def test_compare_unknown_op_raises():
    """An op that is not one of the five is an error, not a silent False."""
    with pytest.raises(KeyError):
        compare(1.0, "==", 1.0)


# --------------------------------------------------------------------------------------
# lookup / evaluate / failed_musts
# --------------------------------------------------------------------------------------
def test_lookup_dotted():
    """lookup walks dotted keys and returns None for any missing part."""
    m = {"gd": {"alpha_1": {"slope": 0.9}}}
    assert lookup(m, "gd.alpha_1.slope") == 0.9
    assert lookup(m, "gd.alpha_2.slope") is None
    assert lookup(m, "gd.alpha_1.slope.x") is None


def test_evaluate_measured_and_holds():
    """evaluate copies the measured value and decides holds with the claim's op."""
    cf = _file(_claim(id="ok", metric="a.b", op=">=", threshold=1.0),
               _claim(id="bad", metric="a.c", op="between", threshold=[0.0, 0.5]))
    rows = evaluate(cf, {"a": {"b": 2, "c": 0.75}})
    assert [(r["id"], r["measured"], r["verdict"]) for r in rows] == [("ok", 2.0, "holds"),
                                                                      ("bad", 0.75, "fails")]
    assert rows[0]["contract"] == 1 and rows[0]["rule"] == "1 seed" and rows[0]["n"] == 1
    assert rows[1]["threshold"] == [0.0, 0.5] and rows[0]["study"] == "s"
    assert rows[0]["source"] == "P"


@pytest.mark.parametrize("metrics", [None, {}, {"a": {}}, {"a": {"b": "1.0"}},
                                     {"a": {"b": True}}, {"a": {"b": math.nan}},
                                     {"a": {"b": math.inf}}])
def test_evaluate_missing_or_non_numeric_metric_is_null(metrics):
    """A missing, non-numeric, boolean or non-finite metric gives measured: null, not run."""
    (row,) = evaluate(_file(_claim()), metrics)
    assert row["measured"] is None and row["verdict"] == "not run" and row["n"] == 0


def test_context_figures_come_from_the_metrics_and_the_note_is_kept():
    """A claim's context keys are looked up in the same metrics (missing: None; a large
    structure is named, not copied); its note travels to the ledger row."""
    cf = _file(_claim(note="fails at large k only", context=["a.c", "a.missing", "big"]))
    (row,) = evaluate(cf, {"a": {"b": 0.5, "c": 40}, "big": {"x": [1] * 100}})
    assert row["note"] == "fails at large k only"
    assert row["context"] == {"a.c": 40, "a.missing": None, "big": "<dict>"}
    (plain,) = evaluate(_file(_claim()), {"a": {"b": 2.0}})
    assert plain["note"] == "" and plain["context"] == {}


def test_ledger_lists_notes_with_their_measured_context():
    from stages.ledger.build import notes_lines, to_markdown

    rows = evaluate(_file(_claim(note="a note", context=["a.c"]), _claim(id="c2")), {"a": {"b": 0.5, "c": 0.25}})
    assert notes_lines(rows) == ["- **s/c1** (fails): a note Measured beside it: a.c = 0.25."]
    md = to_markdown(rows, "default")
    notes = md.split("## Notes", 1)[1].split("\n## ", 1)[0]       # the runs section may follow
    assert notes.rstrip().endswith("a.c = 0.25.")


def test_failed_musts_counts_false_and_null_musts_only():
    """failed_musts = must rows that are False or not run; should rows never count."""
    rows = [{"id": "a", "level": "must", "holds": True},
            {"id": "b", "level": "must", "holds": False},
            {"id": "c", "level": "must", "holds": None},
            {"id": "d", "level": "should", "holds": False},
            {"id": "e", "level": "should", "holds": None}]
    assert [r["id"] for r in failed_musts(rows)] == ["b", "c"]


def test_evaluate_file_without_metrics_file(tmp_path):
    """evaluate_file on a study that did not run: every row is null."""
    f = tmp_path / "claims.yaml"
    f.write_text(yaml.safe_dump(_file(_claim()).model_dump()))
    (row,) = evaluate_file(f, tmp_path)
    assert row["verdict"] == "not run"
    (tmp_path / "m.json").write_text(json.dumps({"a": {"b": 0.5}}))
    (row,) = evaluate_file(f, tmp_path)
    assert row["measured"] == 0.5 and row["verdict"] == "fails"


# --------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("thr", [1.0, [1.0], [1.0, 2.0, 3.0], [2.0, 1.0]])
def test_between_needs_low_high(thr):
    """op 'between' needs threshold [low, high] with low <= high."""
    with pytest.raises(ValidationError, match=r"needs threshold \[low, high\]"):
        Claim(**_claim(op="between", threshold=thr))


def test_single_op_rejects_list():
    """A one-sided op with a list threshold is an error."""
    with pytest.raises(ValidationError, match="needs a single number"):
        Claim(**_claim(op=">=", threshold=[1.0, 2.0]))


@pytest.mark.parametrize("fidelity", ["proxy", "stand-in"])
def test_non_faithful_needs_why(fidelity):
    """A proxy / stand-in claim without 'why' is an error; with a why it validates."""
    with pytest.raises(ValidationError, match="needs a one-line 'why'"):
        Claim(**_claim(fidelity=fidelity, why="   "))
    assert Claim(**_claim(fidelity=fidelity, why="smaller corpus")).why == "smaller corpus"


@pytest.mark.parametrize("bad", [dict(id="Bad-ID"), dict(level="could"), dict(op="=="),
                                 dict(extra="x")])
def test_claim_field_errors(bad):
    """Bad id pattern, level, op or an unknown field are all validation errors."""
    with pytest.raises(ValidationError):
        Claim(**_claim(**bad))


def test_claims_file_needs_a_claim_and_load_claims_wraps_errors(tmp_path):
    """An empty claims list is invalid; load_claims reports it as a ParamsError naming the file."""
    with pytest.raises(ValidationError):
        ClaimsFile(study="s", paper="P", metrics="m.json", claims=[])
    f = tmp_path / "claims.yaml"
    f.write_text(yaml.safe_dump({"study": "s", "paper": "P", "metrics": "m.json", "claims": []}))
    with pytest.raises(ParamsError, match="claims.yaml: invalid claims file"):
        load_claims(f)


# --------------------------------------------------------------------------------------
# the real claims file
# --------------------------------------------------------------------------------------
def test_real_zipf_claims_have_the_studies_checks():
    """zipf_bigram/claims.yaml loads and holds the four checks of STUDIES.md with their thresholds."""
    cf = load_claims(REPO / "stages" / "zipf_bigram" / "claims.yaml")
    by_id = {c.id: c for c in cf.claims}
    assert cf.study == "zipf_bigram"
    assert cf.metrics == "reports/zipf_bigram/metrics.json"
    expected = {
        "gd_slope_alpha1": ("gd.alpha_1.slope", "between", [0.8, 1.1], "must"),
        "sign_slope_alpha1": ("sign.alpha_1.slope", "between", [0.3, 0.6], "must"),
        "gd_over_sign_at_dmax": ("ratio_gd_over_sign_at_dmax.alpha_1", ">=", 5.0, "must"),
        "gd_dimension_free_alpha2": ("gd_ratio_last_two_d.alpha_2", "<", 1.5, "should"),
    }
    for cid, (metric, op, thr, level) in expected.items():
        c = by_id[cid]
        assert (c.metric, c.op, c.threshold, c.level) == (metric, op, thr, level), cid
        assert c.fidelity == "faithful"
    assert len(by_id) == len(cf.claims)  # ids are unique


# --------------------------------------------------------------------------------------
# claimbench check
# --------------------------------------------------------------------------------------
def _rows(*holds_levels) -> list[dict]:
    cf = _file(*[_claim(id=f"c{i}", level=lvl, metric=f"m.c{i}")
                 for i, (_, lvl) in enumerate(holds_levels)])
    metrics = {"m": {f"c{i}": (2.0 if h else 0.0) for i, (h, _) in enumerate(holds_levels)
                     if h is not None}}
    return evaluate(cf, metrics)


def _check(tmp_path, rows, python_exe, sub_env, *extra):
    f = tmp_path / "claims.json"
    f.write_text(rows if isinstance(rows, str) else json.dumps(rows))
    return subprocess.run([python_exe, "-m", "claimbench.cli", "check", str(f), *extra], cwd=REPO,
                          env=sub_env(), capture_output=True, text=True, timeout=60)


def test_check_exits_1_and_names_failing_must(tmp_path, python_exe, sub_env):
    """A failing must claim -> exit 1, its study/id on stderr; a failing should is not named."""
    rows = _rows((True, "must"), (False, "must"), (False, "should"))
    res = _check(tmp_path, rows, python_exe, sub_env)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "1 must claim(s) do not hold: s/c1" in res.stderr
    assert "s/c2" not in res.stderr
    assert "FAILS" in res.stdout and "holds" in res.stdout


def test_check_exits_1_when_must_not_run(tmp_path, python_exe, sub_env):
    """A must claim whose metric is missing (holds null) also fails the check."""
    res = _check(tmp_path, _rows((True, "must"), (None, "must")), python_exe, sub_env)
    assert res.returncode == 1
    assert "s/c1" in res.stderr and "NOT RUN" in res.stdout


def test_check_exits_0_when_all_musts_hold(tmp_path, python_exe, sub_env):
    """All musts hold (a should fails) -> exit 0 and the count of musts."""
    res = _check(tmp_path, _rows((True, "must"), (True, "must"), (False, "should")),
                 python_exe, sub_env)
    assert res.returncode == 0, res.stderr
    assert "all 2 must claims hold" in res.stdout


def test_check_missing_file_exits_2(tmp_path, python_exe, sub_env):
    """A claims.json that does not exist -> exit 2 with a hint."""
    res = subprocess.run([python_exe, "-m", "claimbench.cli", "check",
                          str(tmp_path / "none.json")], cwd=REPO, env=sub_env(),
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "not found" in res.stderr


def test_check_one_study(tmp_path, python_exe, sub_env):
    """--study keeps that study's rows: another study's failing must does not count."""
    rows = _rows((True, "must"))
    other = [dict(r, study="t", holds=False) for r in _rows((False, "must"))]
    res = _check(tmp_path, rows + other, python_exe, sub_env, "--study", "s")
    assert res.returncode == 0 and "t/c0" not in res.stdout, res.stdout + res.stderr
    res = _check(tmp_path, rows + other, python_exe, sub_env, "--study", "t")
    assert res.returncode == 1 and "t/c0" in res.stderr
    res = _check(tmp_path, rows, python_exe, sub_env, "--study", "nope")
    assert res.returncode == 2 and "no claims of study 'nope'" in res.stderr


def test_check_a_claims_yaml_says_what_it_reads(tmp_path, python_exe, sub_env):
    """Given a study's claims.yaml instead of the ledger's JSON -> exit 2 naming the right file."""
    res = _check(tmp_path, "study: s\nclaims: []\n", python_exe, sub_env)
    assert res.returncode == 2 and "reads reports/claims.json" in res.stderr, res.stderr
