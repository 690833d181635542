"""The autoopt stages as subprocesses in a fresh copy of the checkout (MLflow off): the smoke
chain twice gives identical metrics; `source: published` reads the fixture; a missing published
folder stops the stage with a message saying how to get the data."""
from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from .conftest import FIXTURE, REPO

CHAIN = ("stages.autoopt.data.prepare", "stages.autoopt.m1.train", "stages.autoopt.m1.evaluate",
         "stages.autoopt.m2.train", "stages.autoopt.m2.evaluate", "stages.autoopt.m3.evaluate",
         "stages.autoopt.chain.e2e")


def _untimed(x):
    """x without its wall-time fields (keys 'seconds' and 'seconds_<method>'): not results."""
    if isinstance(x, dict):
        return {k: _untimed(v) for k, v in x.items() if k != "seconds" and not k.startswith("seconds_")}
    if isinstance(x, list):
        return [_untimed(v) for v in x]
    return x


def _copy(tmp_path, **prepare):
    from stages.common.checkout import copy_checkout

    root = copy_checkout(REPO, tmp_path / "repo", profile="smoke")
    if prepare:
        params = yaml.safe_load((root / "params.yaml").read_text())
        params["autoopt"]["smoke"]["prepare"].update(prepare)
        (root / "params.yaml").write_text(yaml.safe_dump(params))
    return root


def _run(root, module, env, python_exe):
    return subprocess.run([python_exe, "-m", module], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)


def _chain(root, env, python_exe) -> dict:
    for module in CHAIN:
        res = _run(root, module, env, python_exe)
        assert res.returncode == 0, f"{module}: {res.stderr[-3000:]}"
    return {name: _untimed(json.loads((root / f"reports/autoopt/{name}.json").read_text()))
            for name in ("prepare", "m1_metrics", "metrics")}


@pytest.mark.slow
def test_smoke_chain_twice_gives_identical_metrics(tmp_path, stage_env, python_exe):
    root = _copy(tmp_path)
    first = _chain(root, stage_env, python_exe)
    second = _chain(root, stage_env, python_exe)
    for d in (first, second):
        d["prepare"].pop("render_s")                      # wall time, not a result
    assert first == second
    m = first["m1_metrics"]
    preds = json.loads((root / "data/autoopt/m1_predictions.json").read_text())
    assert {k: len(v) for k, v in preds.items()} == {"printed": 8, "handwritten": 8}
    assert all(set(p) == {"id", "latex"} for v in preds.values() for p in v)
    assert set(m["m1"]) == {"printed", "handwritten"} and set(m["retrieval"]) == {"printed", "handwritten"}
    assert len(m["curve"]["points"]) == 3
    merged = first["metrics"]                          # the e2e stage's merge, what claims.yaml reads
    assert {"m2", "m3", "e2e"} <= set(merged) and merged["m1"] == m["m1"]
    assert set(merged["e2e"]["by_source"]) == {"reference_pyomo", "ground_truth_latex", "image"}
    assert merged["m2"]["rules"]["ground_truth"]["printed"]["equivalent_rate"] is not None
    assert merged["m3"]["complex"]["margin_vs_ipopt"] is not None
    import datasets

    dd = datasets.load_from_disk(str(root / "data/autoopt/dataset"))
    assert set(dd) == {"train", "validation", "test", "test_handwritten"}
    assert set(dd["test_handwritten"]["style"]) == {"handwritten"} and set(dd["test"]["style"]) == {"printed"}
    assert (root / "data/autoopt/m1/mlflow_model/MLmodel").exists()


@pytest.mark.slow
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
