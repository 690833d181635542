"""stages.common.mlmodel: the one way studies save a pyfunc model."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from stages.common.mlmodel import pinned, save_pyfunc



def example():
    import pandas as pd

    return pd.DataFrame({"x": [1.0, 2.0]})

CODE = '''
import json

import mlflow.pyfunc
from mlflow.models import set_model


class Scale(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        self.k = json.loads(open(context.artifacts["config"]).read())["k"]

    def predict(self, context, model_input, params=None):
        if list(model_input.columns) != ["x"]:
            raise ValueError("Scale: the input needs exactly the column 'x'")
        return model_input * self.k


set_model(Scale())
'''


@pytest.fixture()
def model_files(tmp_path):
    code, config = tmp_path / "pyfunc.py", tmp_path / "config.json"
    code.write_text(CODE)
    config.write_text(json.dumps({"k": 3}))
    return code, config


def _stable(folder: Path) -> dict[str, str]:
    """The folder's files, less MLmodel's per-save fields (creation time, uuid)."""
    out = {}
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = f.read_text()
        if f.name == "MLmodel":
            text = "\n".join(ln for ln in text.splitlines()
                             if not ln.startswith(("utc_time_created", "model_uuid")))
        out[str(f.relative_to(folder))] = text
    return out


def test_saves_a_model_that_loads_and_predicts(tmp_path, model_files):
    import mlflow.pyfunc
    import pandas as pd

    code, config = model_files
    target = save_pyfunc(tmp_path / "model", code, {"config": config}, requirements=["pandas"],
                         input_example=example())
    assert (target / "MLmodel").is_file() and (target / "artifacts" / "config.json").is_file()
    assert "pandas" in (target / "requirements.txt").read_text().split()
    model = mlflow.pyfunc.load_model(str(target))
    assert model.predict(pd.DataFrame({"x": [1.0, 2.0]}))["x"].tolist() == [3.0, 6.0]


def test_the_signature_and_example_are_saved_and_enforced(tmp_path, model_files):
    """MLflow ran the model on the example: the signature names the input column and the output,
    the example loads back, and a column the signature lacks is refused at predict time."""
    import mlflow.pyfunc
    import pandas as pd
    from mlflow.models import Model

    code, config = model_files
    target = save_pyfunc(tmp_path / "model", code, {"config": config}, input_example=example())
    meta = Model.load(str(target))
    assert meta.signature.inputs.input_names() == ["x"]
    assert meta.signature.outputs.input_names() == ["x"]
    pd.testing.assert_frame_equal(meta.load_input_example(str(target)), example())
    model = mlflow.pyfunc.load_model(str(target))
    assert model.predict(example())["x"].tolist() == [3.0, 6.0]
    with pytest.raises(Exception, match="x"):
        model.predict(pd.DataFrame({"z": [1.0]}))


def test_default_requirements_pin_torch_and_numpy(tmp_path, model_files):
    code, config = model_files
    save_pyfunc(tmp_path / "m", code, {"config": config}, input_example=example())
    reqs = (tmp_path / "m" / "requirements.txt").read_text().split()
    for r in pinned("torch", "numpy"):
        assert r in reqs
    assert pinned("numpy") == [f"numpy=={_version('numpy')}"]


def test_the_folder_is_what_mlflows_own_save_model_writes(tmp_path, model_files):
    """save_pyfunc adds only atomicity: the folder equals a plain mlflow save_model's."""
    import mlflow.pyfunc

    code, config = model_files
    ours = save_pyfunc(tmp_path / "ours", code, {"config": config}, input_example=example())
    mlflow.pyfunc.save_model(str(tmp_path / "plain"), python_model=str(code), artifacts={"config": str(config)},
                             pip_requirements=pinned("torch", "numpy"), input_example=example())
    assert _stable(ours) == _stable(tmp_path / "plain")


def test_a_failed_save_keeps_the_previous_model(tmp_path, model_files, monkeypatch):
    import mlflow.pyfunc

    code, config = model_files
    target = save_pyfunc(tmp_path / "model", code, {"config": config}, input_example=example())
    before = _stable(target)

    def broken(path, **kw):
        Path(path).mkdir()
        (Path(path) / "half-written").write_text("x")
        raise OSError("disk full")

    monkeypatch.setattr(mlflow.pyfunc, "save_model", broken)
    with pytest.raises(OSError, match="disk full"):
        save_pyfunc(target, code, {"config": config}, input_example=example())
    assert _stable(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "model", "pyfunc.py"]


def test_bad_inputs_are_named(tmp_path, model_files):
    code, config = model_files
    with pytest.raises(FileNotFoundError, match="code file .*nope.py does not exist"):
        save_pyfunc(tmp_path / "m", tmp_path / "nope.py", {"config": config}, input_example=example())
    with pytest.raises(FileNotFoundError, match="artifacts not found: weights=.*w.pt"):
        save_pyfunc(tmp_path / "m", code, {"config": config, "weights": tmp_path / "w.pt"}, input_example=example())
    with pytest.raises(ValueError, match="needs an input_example"):
        save_pyfunc(tmp_path / "m", code, {"config": config}, input_example=None)
    with pytest.raises(ValueError, match="no input and output signature"):   # predict refuses the example
        save_pyfunc(tmp_path / "m", code, {"config": config}, input_example=example().rename(columns={"x": "y"}))
    assert not (tmp_path / "m").exists()


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)
