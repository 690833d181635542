"""The m2-evaluate stage: rates counted right on rows whose answers are known by construction
(a fake seq2seq that returns the reference or garbage, a fake M1 that damages some LaTeX), the
M1 predictions file checked, and the stage itself at smoke size twice giving the same metrics."""
from __future__ import annotations

import json

import pytest

from stages.autoopt.data import grammar as g
from stages.autoopt.m2.evaluate import InputError, evaluate, load_m1_predictions, row_seed, text_scores
from stages.autoopt.m2.rules import translate_many
from stages.autoopt.params import AutoOptParams, M2EvalParams
from tests.helpers import code_copy, params_error, run_module

from .conftest import GEN

P = M2EvalParams(translators=["rules", "seq2seq"], time_limit_s=10, memory_mb=1024, workers=1, points=4,
                 rel_tol=1e-6, abs_tol=1e-6, max_rows=0, examples=2)

def rows(offset: int, n: int) -> dict:
    ps = [g.generate(offset + k, **GEN) for k in range(n)]
    return {"id": [f"r{offset + k}" for k in range(n)], "latex": [p.latex() for p in ps],
            "pyomo": [p.pyomo() for p in ps], "type": [p.ptype for p in ps]}


def damaged(latex: list[str]) -> list[str]:
    """M1 stand-in: every third LaTeX cut in half (cannot parse), the rest exact."""
    return [s[: len(s) // 2] if k % 3 == 0 else s for k, s in enumerate(latex)]


@pytest.fixture(scope="module")
def result():
    splits = {"printed": rows(0, 12), "handwritten": rows(500, 9)}
    m1 = {s: damaged(r["latex"]) for s, r in splits.items()}
    refs = {s: dict(zip(r["latex"], r["pyomo"])) for s, r in splits.items()}
    ref_of = {lx: py for d in refs.values() for lx, py in d.items()}

    def fake_seq2seq(latex: list[str]) -> list[tuple[str, str]]:
        # the reference itself for even positions (when the LaTeX is a true one), garbage for odd
        return [((ref_of.get(s, "def build_model(:\n")) if k % 2 == 0 else "m = (", "")
                for k, s in enumerate(latex)]
    return splits, m1, evaluate(splits, m1, {"rules": translate_many, "seq2seq": fake_seq2seq}, P, seed=0)


def test_rates_match_what_the_inputs_make(result):
    splits, m1, (metrics, examples, csv_rows) = result
    m = metrics["m2"]
    for split, r in splits.items():
        n = len(r["id"])
        cut = len(range(0, n, 3))
        assert m["rules"]["ground_truth"][split]["equivalent_rate"] == 1.0
        assert m["rules"]["m1"][split]["equivalent_rate"] == pytest.approx((n - cut) / n)
        assert m["rules"]["m1"][split]["failure_reasons"] == {"translate": cut}
        assert metrics["end_to_end_loss"]["rules"][split] == pytest.approx(cut / n)
        evens = len(range(0, n, 2))
        assert m["seq2seq"]["ground_truth"][split]["equivalent_rate"] == pytest.approx(evens / n)
        assert m["seq2seq"]["ground_truth"][split]["failure_reasons"] == {"syntax": n - evens}
        # on M1's LaTeX the fake finds the reference only for exact predictions at even positions
        good = sum(1 for k in range(0, n, 2) if k % 3 != 0)
        assert m["seq2seq"]["m1"][split]["equivalent_rate"] == pytest.approx(good / n)
        assert m["rules"]["ground_truth"][split]["bleu"] > 95
        assert sum(t["n"] for t in m["rules"]["ground_truth"][split]["by_type"].values()) == n
    assert len(csv_rows) == 2 * 2 * 2
    assert len(examples["printed"]) == 2 and examples["printed"][0]["rules.ground_truth"]["equivalent"]


def test_identical_jobs_run_once(result):
    splits, _, (metrics, _, _) = result
    # distinct (script, reference, seed): rules on the truth (one a row; rules on M1's exact
    # predictions repeats them), the fake on the truth (one a row; on M1's exact LaTeX and at odd
    # positions it repeats them), plus the fake's garbage for cut LaTeX at even positions
    n = [len(r["id"]) for r in splits.values()]
    extra = sum(1 for m in n for k in range(0, m, 2) if k % 3 == 0)
    assert metrics["sandbox_jobs"] == 2 * sum(n) + extra


def test_text_scores_against_known_values():
    ref = "def build_model():\n    \"\"\"tags\"\"\"\n    return m\n"
    assert text_scores([ref], [ref]) == {"bleu": pytest.approx(100.0), "cer": 0.0}
    out = text_scores(["def build_model():\n    return n\n"], [ref])
    assert out["cer"] == pytest.approx(1 / len("def build_model():\n    return m\n"))
    assert row_seed(0, "a") == row_seed(0, "a") != row_seed(1, "a")


def _seeded(preds: dict, seed: int = 3) -> str:
    return json.dumps({"seeds": [seed], "per_seed": {str(seed): preds}})


def test_m1_predictions_file_is_checked(tmp_path):
    ids = {"printed": ["a", "b"], "handwritten": ["c"]}
    path = tmp_path / "m1.json"
    with pytest.raises(InputError, match="m1-evaluate"):
        load_m1_predictions(path, ids, 3)
    path.write_text("{")
    with pytest.raises(InputError, match="not JSON"):
        load_m1_predictions(path, ids, 3)
    path.write_text(_seeded({"printed": [{"id": "a", "latex": "x"}, {"id": "b", "latex": "y"}]}))
    with pytest.raises(InputError, match="handwritten"):
        load_m1_predictions(path, ids, 3)
    with pytest.raises(InputError, match="no predictions of verdict seed 4"):
        load_m1_predictions(path, ids, 4)
    path.write_text(_seeded({"printed": [{"id": "a", "latex": "x"}], "handwritten": [{"id": "c", "latex": "z"}]}))
    with pytest.raises(InputError, match="1 row"):
        load_m1_predictions(path, ids, 3)
    path.write_text(_seeded({"printed": [{"id": "b", "latex": "y"}, {"id": "a", "latex": "x"}],
                             "handwritten": [{"id": "c", "latex": "z"}]}))
    assert load_m1_predictions(path, ids, 3) == {"printed": ["x", "y"], "handwritten": ["z"]}


def test_bad_params_are_refused(real_params):
    import copy

    data = copy.deepcopy(real_params)
    data["autoopt"]["default"]["m2_evaluate"]["translators"] = ["rules", "gpt"]
    assert "translators" in params_error("autoopt", AutoOptParams, data, profile="default")
    data["autoopt"]["default"]["m2_evaluate"]["translators"] = ["rules", "rules"]
    assert "each at most once" in params_error("autoopt", AutoOptParams, data, profile="default")
    data["autoopt"]["default"]["m2_evaluate"]["translators"] = ["rules"]
    data["autoopt"]["default"]["m2_evaluate"]["memory_mb"] = 100
    assert "memory_mb" in params_error("autoopt", AutoOptParams, data, profile="default")


# --------------------------------------------------------------------------- the stage
def stage_copy(tmp_path, with_predictions: bool = True):
    import datasets

    root = code_copy(tmp_path, params={"common.profile": "smoke",
                                       "autoopt.smoke.m2_evaluate.translators": ["rules"]})
    preds = {}
    dd = {}
    for name, split, offset in (("printed", "test", 0), ("handwritten", "test_handwritten", 700)):
        r = rows(offset, 10)
        dd[split] = datasets.Dataset.from_dict({"id": r["id"], "latex": r["latex"], "pyomo": r["pyomo"],
                                                "tags": [{"type": t} for t in r["type"]]})
        preds[name] = [{"id": i, "latex": s} for i, s in zip(r["id"], damaged(r["latex"]))]
    datasets.DatasetDict(dd).save_to_disk(str(root / "data/autoopt/dataset"))
    if with_predictions:
        (root / "data/autoopt/m1_predictions.json").write_text(
            json.dumps({"seeds": [0, 1], "per_seed": {"0": preds, "1": preds}}))
    return root


def test_stage_without_m1_predictions_stops_clearly(tmp_path, stage_env, python_exe):
    root = stage_copy(tmp_path, with_predictions=False)
    res = run_module(root, "stages.autoopt.m2.evaluate", stage_env, python_exe)
    assert res.returncode == 2
    assert ("data/autoopt/m1_predictions.json (made by stage autoopt-m1-evaluate) is missing; run "
            "`dvc repro stages/autoopt/dvc.yaml:autoopt-m1-evaluate`") in res.stderr
    assert not (root / "reports/autoopt/m2_metrics.json").exists()


def test_seq2seq_translator_calls_the_m2_seq2seq_interface(tmp_path, monkeypatch):
    """load_checkpoint(path, device) -> (model, vocab); translate(model, vocab, latex, device)
    -> scripts (a stand-in module here: the real one is m2-train's and imports torch)."""
    import sys
    import types

    from stages.autoopt.m2.evaluate import seq2seq_translator

    calls = []
    fake = types.ModuleType("stages.autoopt.m2.seq2seq")
    fake.load_checkpoint = lambda path, device: calls.append(("load", str(path), device)) or ("M", "V")

    def translate(model, vocab, latex, device):
        if any("bad" in s for s in latex):
            raise ValueError("LaTeX ends in a lone backslash")
        return [f"# {model}{vocab} {s}" for s in latex]
    fake.translate = translate
    monkeypatch.setitem(sys.modules, "stages.autoopt.m2.seq2seq", fake)
    with pytest.raises(InputError, match="m2-train"):
        seq2seq_translator(tmp_path / "seq2seq.pt", "cpu")
    (tmp_path / "seq2seq.pt").write_bytes(b"")
    run = seq2seq_translator(tmp_path / "seq2seq.pt", "cpu")
    assert run(["a", "b"]) == [("# MV a", ""), ("# MV b", "")]
    assert run(["a", "bad", "c"]) == [("# MV a", ""), ("", "seq2seq: LaTeX ends in a lone backslash"), ("# MV c", "")]
    assert calls == [("load", str(tmp_path / "seq2seq.pt"), "cpu")]
