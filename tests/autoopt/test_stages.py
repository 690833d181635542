"""The autoopt stages on the smoke profile: in the session's smoke build every stage run once more
gives the same outputs; `source: published` reads the fixture (a fresh copy); a missing published
folder stops the stage with a message saying how to get the data."""
from __future__ import annotations

import json
import subprocess

import pytest

from .conftest import FIXTURE, REPO


def _copy(tmp_path, **prepare):
    from stages.common.runtime.checkout import copy_checkout

    from tests.helpers import set_params

    root = copy_checkout(REPO, tmp_path / "repo", profile="smoke")
    set_params(root, {f"autoopt.smoke.prepare.{k}": v for k, v in prepare.items()})
    return root


def _run(root, module, env, python_exe):
    return subprocess.run([python_exe, "-m", module], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)


# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/autoopt/m1/mlflow_model/MLmodel", "data/autoopt/m2/mlflow_model/MLmodel")


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study, real_params):
    """Every autoopt stage (prepare, M1 train/evaluate, M2 train/evaluate, M3, the chain) run once
    more in a copy of the session's smoke build writes the same outs (wall times aside), M1's and
    M2's checkpoints included; then what the claims read is there."""
    out = rerun_study("autoopt", volatile=VOLATILE)
    root = out["root"]
    m = out["m1_metrics"]
    preds = json.loads((root / "data/autoopt/m1_predictions.json").read_text())
    seeds = preds["seeds"]
    assert len(seeds) == 2 and set(preds["per_seed"]) == {str(s) for s in seeds}
    for per in preds["per_seed"].values():
        assert {k: len(v) for k, v in per.items()} == {"printed": 8, "handwritten": 8}
        assert all(set(p) == {"id", "latex"} for v in per.values() for p in v)
    assert set(m["m1"]) == {"printed", "handwritten"} and set(m["retrieval"]) == {"printed", "handwritten"}
    assert len(m["curve"]["points"]) == 3
    merged = out["metrics"]                            # the e2e stage's merge, what claims.yaml reads
    assert {"m2", "m3", "e2e"} <= set(merged) and merged["m1"] == m["m1"]
    assert set(merged["per_seed"]) == {str(s) for s in seeds}
    assert {"margin_bleu", "control", "m2", "m3", "e2e"} <= set(merged["per_seed"][str(seeds[1])])
    assert set(merged["e2e"]["by_source"]) == {"reference_pyomo", "ground_truth_latex", "image"}
    assert merged["m2"]["rules"]["ground_truth"]["printed"]["equivalent_rate"] is not None
    assert merged["m3"]["complex"]["margin_vs_ipopt"] is not None
    m2 = out["m2_metrics"]
    rows = real_params["autoopt"]["smoke"]["m2_evaluate"]["max_rows"]   # smoke max_rows, a test-split cap
    assert m2["rows"] == {"printed": rows, "handwritten": rows}
    assert m2["m2"]["rules"]["ground_truth"]["printed"]["equivalent_rate"] == 1.0
    t2 = out["m2_train"]
    assert t2["trained"] and t2["val_greedy_rows"] >= 1 and 0 <= t2["val_token_accuracy"] <= 1
    assert set(t2["per_seed"]) == {str(s) for s in seeds}
    m3 = out["m3_metrics"]["m3"]
    assert {"nonconvex", "integer", "bilevel"} <= set(m3["classes"])
    import datasets

    dd = datasets.load_from_disk(str(root / "data/autoopt/dataset"))
    assert set(dd) == {"train", "validation", "test", "test_handwritten"}
    assert set(dd["test_handwritten"]["style"]) == {"handwritten"} and set(dd["test"]["style"]) == {"printed"}
    for rel in ("data/autoopt/m1/mlflow_model/MLmodel", "data/autoopt/m2/mlflow_model/MLmodel",
                "reports/autoopt/m3_plots/complex.png", "reports/autoopt/m2_equivalence.png"):
        assert (root / rel).stat().st_size > 0, rel


@pytest.mark.study
def test_published_source_reads_the_fixture(tmp_path, stage_env, python_exe):
    root = _copy(tmp_path, source="published", published_path=str(FIXTURE))
    res = _run(root, "stages.autoopt.data.prepare", stage_env, python_exe)
    assert res.returncode == 0, res.stderr[-3000:]
    import datasets

    dd = datasets.load_from_disk(str(root / "data/autoopt/dataset"))
    assert {s: len(dd[s]) for s in dd} == {"train": 3, "validation": 2, "test": 2}
    lines = (FIXTURE / "test" / "Latex.txt").read_text().split("\n")
    assert dd["test"]["latex"] == lines[:2]
    card = json.loads((root / "data/autoopt/card.json").read_text())
    assert card["source"] == "published"


def test_missing_published_folder_fails_clearly(tmp_path, stage_env, python_exe):
    root = _copy(tmp_path, source="published", published_path=str(tmp_path / "absent"))
    res = _run(root, "stages.autoopt.data.prepare", stage_env, python_exe)
    assert res.returncode == 2
    assert "AutoOpt-11k not found" in res.stderr and "ankurzing/autoopt-11k" in res.stderr
    assert not (root / "data/autoopt/dataset").exists()          # nothing written
