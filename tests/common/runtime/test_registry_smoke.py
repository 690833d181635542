"""The registered models of the session's smoke build (its own MLflow store, read only): each
trained model is a version tagged with what made it, the DVC hashes of its training data equal
what dvc.lock recorded after the run, the ledger's alias is on the version behind the reports
it read, and `mlflow.pyfunc.load_model("models:/<name>@ledger")` loads and predicts (as the
README shows)."""
from __future__ import annotations

import io
import json
import subprocess

import pytest
import yaml

MODELS = {"autoopt-m1": "autoopt-m1-train", "autoopt-m2_seq2seq": "autoopt-m2-train",
          "fgbench-text": "fgbench-train"}


@pytest.fixture
def store(smoke_built, monkeypatch):
    root = smoke_built[0]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{root / 'mlruns.db'}")
    from mlflow.tracking import MlflowClient

    return root, MlflowClient()


@pytest.mark.study
def test_smoke_versions_carry_commit_profile_and_dvc_lock_hashes(store):
    from stages.common.io import dvc_md5

    root, c = store
    names = sorted(m.name for m in c.search_registered_models())
    assert set(MODELS) <= set(names), f"registered: {names}"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    for name in names:                                   # every study's models, not only the ones named
        v = c.get_model_version_by_alias(name, "ledger")
        stage = v.tags["dvc.stage"]
        assert stage == MODELS.get(name, stage)
        study = name.split("-")[0]
        lock = yaml.safe_load((root / f"stages/{study}/dvc.lock").read_text())["stages"][stage]
        data = {d["path"]: d["md5"] for d in lock["deps"] if not d["path"].startswith("stages/")}
        assert data or name not in MODELS, f"{stage} has no data deps in dvc.lock"   # mtl_kd generates its own
        tagged = {k[len("training_data."):]: h for k, h in v.tags.items() if k.startswith("training_data.")}
        assert tagged == data, f"{name}: training-data hashes differ from dvc.lock"
        assert v.tags["profile"] == "smoke" and v.tags["mlflow.source.git.commit"] == head
        metrics = {k[len("metrics_file."):]: h for k, h in v.tags.items() if k.startswith("metrics_file.")}
        assert metrics and all(dvc_md5(root / m) == h for m, h in metrics.items())   # what the ledger read
        assert c.get_run(v.run_id).data.tags["dvc.stage"] == stage


@pytest.mark.study
def test_smoke_models_load_by_alias_and_predict(store):
    """fgbench-text answers the test questions as the stage did (all of them); autoopt-m1 reads
    test images as its evaluate stage did; autoopt-m2_seq2seq writes a script for a LaTeX model."""
    import datasets
    import mlflow.pyfunc
    import pandas as pd

    root, _ = store
    text = mlflow.pyfunc.load_model("models:/fgbench-text@ledger")
    # the registered text model is the first verdict seed's (data/fgbench/<qa|predictions>/<seed>)
    first = str(min(int(d.name) for d in (root / "data/fgbench/qa").iterdir()))
    test = datasets.load_from_disk(str(root / "data/fgbench/qa" / first))["test"].to_pandas()
    pairs = json.loads((root / "data/fgbench/predictions" / first / "pairs.json").read_text())
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)          # as fgbench-train answered them (limit_threads): the float32
    try:                              # sums of a value answer follow the thread count
        got = list(text.predict(test[["question", "type", "dataset"]]))
    finally:
        torch.set_num_threads(threads)
    assert got == [p["text"] for p in pairs]

    m1 = mlflow.pyfunc.load_model("models:/autoopt-m1@ledger")
    printed = datasets.load_from_disk(str(root / "data/autoopt/dataset"))["test"]
    # the registered M1 is the first verdict seed's (main.pt); its evaluate predictions are per seed
    predictions = json.loads((root / "data/autoopt/m1_predictions.json").read_text())
    want = predictions["per_seed"][str(predictions["seeds"][0])]["printed"]

    def png(img) -> bytes:
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return buf.getvalue()

    got = m1.predict(pd.DataFrame({"image": [png(im) for im in printed["image"]]}))
    assert list(got) == [w["latex"] for w in want]

    m2 = mlflow.pyfunc.load_model("models:/autoopt-m2_seq2seq@ledger")
    scripts = m2.predict(pd.DataFrame({"latex": printed["latex"][:2]}))
    assert len(scripts) == 2 and all(isinstance(s, str) and s for s in scripts)



def _studies_registering() -> set[str]:
    """The studies whose code calls ``log_model`` (the names are often built at run time, one
    per learner or method: the smoke build says which)."""
    import ast

    from tests.helpers import REPO

    studies = set()
    for path in sorted((REPO / "stages").rglob("*.py")):
        study = path.relative_to(REPO / "stages").parts[0]
        if study != "common" and any(isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "log_model"
                                     for node in ast.walk(ast.parse(path.read_text()))):
            studies.add(study)
    return studies


@pytest.mark.study
def test_every_registered_model_has_a_signature_and_predicts_its_example(store):
    """Every study whose code registers a model registered at least one in the smoke build, and
    every registered model's ledger version has an input and an output schema and an input
    example; loaded by alias it predicts on that example, and what it returns has the output
    schema it was saved with."""
    import mlflow.pyfunc
    from mlflow.models import infer_signature

    _, c = store
    names = sorted(m.name for m in c.search_registered_models())
    studies = _studies_registering()
    assert len(studies) >= 25 and {n.split("-")[0] for n in names} == studies, (sorted(studies), names)
    for name in names:
        model = mlflow.pyfunc.load_model(f"models:/{name}@ledger")
        sig = model.metadata.signature
        assert sig is not None and sig.inputs is not None and sig.outputs is not None, f"{name}: no signature"
        example = model.input_example
        assert example is not None, f"{name}: no input example"
        out = model.predict(example)
        assert infer_signature(example, out).outputs == sig.outputs, f"{name}: output differs from its signature"
