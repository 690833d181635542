"""The claims contract v2 (docs/VERDICTS.md): rules over verdict seeds, paired comparisons,
controls (a must whose control passes too is `not specific`), registration, retired claims."""
from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from stages.common.claims import ClaimsFileV2, evaluate, failed_musts, load_claims
from stages.common.runtime.params import ParamsError

REPO = Path(__file__).resolve().parents[2]
SEEDS = [0, 1, 2, 3, 4]


def _claim(**kw) -> dict:
    base = dict(id="c1", statement="s", paper="p", where="w", metric="method", op=">",
                threshold=0.0, level="must", fidelity="faithful", registered="2026-12-06",
                baseline="baseline", control="ablation")
    base.update(kw)
    return {k: v for k, v in base.items() if v is not None}


def _file(*claims: dict) -> ClaimsFileV2:
    return ClaimsFileV2.model_validate({"study": "s", "paper": "P", "metrics": "m.json",
                                        "contract": 2, "claims": list(claims)})


def _metrics(**arms: list[float]) -> dict:
    """A metrics file with per-seed values for each named arm."""
    return {"per_seed": {str(s): {k: v[i] for k, v in arms.items()} for i, s in enumerate(SEEDS)}}


METHOD = [1.0, 1.2, 1.1, 1.3, 1.15]
BASE = [0.5, 0.6, 0.55, 0.5, 0.6]
ABLATION_SAME_AS_BASE = [0.52, 0.58, 0.57, 0.49, 0.61]
ABLATION_AS_GOOD = [1.1, 1.2, 1.0, 1.25, 1.2]


def test_comparative_must_holds_when_its_control_does_not():
    (row,) = evaluate(_file(_claim()), _metrics(method=METHOD, baseline=BASE,
                                                ablation=ABLATION_SAME_AS_BASE), SEEDS)
    assert row["verdict"] == "holds" and row["contract"] == 2 and row["n"] == 5
    assert row["per_seed"] == {str(s): pytest.approx(m - b) for s, m, b in zip(SEEDS, METHOD, BASE)}
    assert row["interval"][0] > 0 and row["method"] == "t"
    assert row["effect"]["p_greater"] == 1.0 and row["effect"]["d_z"] > 1
    assert row["control"]["metric"] == "ablation" and row["control"]["verdict"] in ("fails", "inconclusive")


def test_planted_must_whose_control_also_passes_is_not_specific():
    """The ablation without the paper's idea beats the baseline as clearly: the check does not see
    the idea."""
    (row,) = evaluate(_file(_claim()), _metrics(method=METHOD, baseline=BASE,
                                                ablation=ABLATION_AS_GOOD), SEEDS)
    assert row["control"]["verdict"] == "holds"
    assert row["verdict"] == "not specific"
    assert failed_musts([row]) == [row]


def test_a_missing_control_arm_leaves_the_must_not_run():
    (row,) = evaluate(_file(_claim()), _metrics(method=METHOD, baseline=BASE), SEEDS)
    assert row["control"]["verdict"] == "not run" and row["verdict"] == "not run"


def test_interval_rule_fails_and_is_inconclusive():
    f = _file(_claim(control=None, why_no_control="a property", baseline=None))
    (fails,) = evaluate(f, _metrics(method=[-1.0, -1.2, -0.9, -1.1, -1.0]), SEEDS)
    (unsure,) = evaluate(f, _metrics(method=[1.0, -1.0, 0.5, -0.5, 0.2]), SEEDS)
    assert (fails["verdict"], unsure["verdict"]) == ("fails", "inconclusive")
    assert fails["control"] is None and fails["why_no_control"] == "a property"


def test_a_missing_seed_is_not_run_never_judged_on_fewer_seeds():
    m = _metrics(method=METHOD, baseline=BASE, ablation=ABLATION_SAME_AS_BASE)
    del m["per_seed"]["3"]
    (row,) = evaluate(_file(_claim()), m, SEEDS)
    assert row["verdict"] == "not run" and row["per_seed"]["3"] is None


def test_every_seed_and_deterministic_claims():
    f = _file(_claim(id="zero_violations", metric="violations", op="<=", rule="every_seed",
                     baseline=None, control=None, why_no_control="a property of every run"),
              _claim(id="closed_form", metric="exact", op="between", threshold=[0.9, 1.1],
                     deterministic=True, baseline=None, control=None, why_no_control="a closed form"))
    m = _metrics(violations=[0.0] * 5)
    m["exact"] = 1.0
    rows = {r["id"]: r for r in evaluate(f, m, SEEDS)}
    assert rows["zero_violations"]["verdict"] == "holds" and not rows["zero_violations"]["constant"]
    assert rows["closed_form"]["verdict"] == "holds" and rows["closed_form"]["n"] == 1
    m["per_seed"]["2"]["violations"] = 1.0
    assert evaluate(f, m, SEEDS)[0]["verdict"] == "fails"


def test_a_figure_that_ignores_its_seed_is_flagged_constant():
    (row,) = evaluate(_file(_claim(control=None, why_no_control="x", baseline=None)),
                      _metrics(method=[2.0] * 5), SEEDS)
    assert row["constant"] is True and row["verdict"] == "holds"


def test_equivalence_rule_uses_tost():
    f = _file(_claim(op="between", threshold=[-0.1, 0.1], rule="equivalence", control=None,
                     why_no_control="an equivalence", baseline="baseline"))
    (row,) = evaluate(f, _metrics(method=[0.5, 0.52, 0.49, 0.5, 0.51], baseline=[0.5, 0.5, 0.5, 0.51, 0.5]), SEEDS)
    assert row["verdict"] == "holds" and row["tost_p"] < 0.05


def test_retired_claim_keeps_its_last_figure():
    f = _file(_claim(retired={"date": "2026-12-06", "why": "replaced by c2", "last_measured": 0.3,
                              "last_verdict": "holds"}))
    (row,) = evaluate(f, {}, SEEDS)
    assert row["verdict"] == "retired" and row["measured"] == 0.3
    assert row["retired"]["last_verdict"] == "holds" and failed_musts([row]) == []


@pytest.mark.parametrize("change, message", [
    (dict(control=None), "a must names its control"),
    (dict(why_no_control="because"), "not both"),
    (dict(rule="equivalence"), "needs op 'between'"),
    (dict(revisions=[{"date": "2026-01-01", "change": "x", "why": "y"}]), "before its registration"),
    (dict(registered=None), "registered"),
    (dict(rule="majority"), "rule"),
])
def test_validation(change, message):
    with pytest.raises(ValueError, match=message):
        _file(_claim(**change))


def test_ids_are_unique_and_files_load_by_contract(tmp_path):
    with pytest.raises(ValueError, match="claim ids used twice: c1"):
        _file(_claim(), _claim())
    f = tmp_path / "claims.yaml"
    data = {"study": "s", "paper": "P", "metrics": "m.json", "contract": 2, "claims": [_claim()]}
    f.write_text(yaml.safe_dump(data))
    cf = load_claims(f)
    assert isinstance(cf, ClaimsFileV2) and cf.claims[0].registered == dt.date(2026, 12, 6)
    data["claims"][0].pop("control")
    f.write_text(yaml.safe_dump(data))
    with pytest.raises(ParamsError, match="(?s)claims.yaml: invalid claims file: .*names its control"):
        load_claims(f)


def test_check_names_each_must_with_its_verdict(tmp_path, python_exe, sub_env):
    rows = evaluate(_file(_claim(id="specific"), _claim(id="unspecific", control="method2")),
                    _metrics(method=METHOD, baseline=BASE, ablation=ABLATION_SAME_AS_BASE,
                             method2=ABLATION_AS_GOOD), SEEDS)
    assert [r["verdict"] for r in rows] == ["holds", "not specific"]
    (tmp_path / "claims.json").write_text(json.dumps(rows))
    res = subprocess.run([python_exe, "-m", "claimbench.cli", "check", str(tmp_path / "claims.json")],
                         cwd=REPO, env=sub_env(), capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert "1 must claim(s) do not hold: s/unspecific (not specific)" in res.stderr
    assert "NOT SPECIFIC" in res.stdout
