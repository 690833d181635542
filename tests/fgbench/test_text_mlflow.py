"""The text models as an MLflow pyfunc model (stages/fgbench/pyfunc.py): saved, loaded back by
MLflow, they give the answers the stage gives; a bad input is named."""
from __future__ import annotations

import numpy as np
import pytest

from stages.fgbench import textmodel


class P:
    dim, buckets, epochs, batch_size, lr, max_tokens = 8, 512, 20, 8, 0.05, 16


def test_saved_text_model_answers_as_the_stage(tmp_path):
    import mlflow.pyfunc
    import pandas as pd

    texts = [f"molecule {w} here" for w in ("up", "down") * 20]
    models = {"bool": textmodel.fit(texts, np.array([1.0, 0.0] * 20), "bool", P, 0, False)[0],
              "value": textmodel.fit(texts, np.array([1.0, -1.0] * 20), "value", P, 1, False)[0]}
    scale = {"esol": 2.5}
    rows = [{"question": "molecule up here", "type": "single_bool_classification", "dataset": "esol"},
            {"question": "molecule down here", "type": "comparison_bool_regression", "dataset": "esol"},
            {"question": "molecule up here", "type": "interaction_value_regression", "dataset": "esol"},
            {"question": "molecule down here", "type": "single_value_regression", "dataset": "other"}]
    expected = textmodel.answer_all(models, scale, rows, P.buckets, P.max_tokens)
    assert expected[:2] == ["True", "False"]
    assert float(expected[2]) > 1.0 and -1.5 < float(expected[3]) < 0          # scaled by 2.5, by 1
    textmodel.save_mlflow(tmp_path / "model", models, scale, P, rows)
    assert (tmp_path / "model" / "MLmodel").is_file() and not list(tmp_path.glob(".tmp-*"))
    from mlflow.models import Model

    meta = Model.load(str(tmp_path / "model"))       # the example: the first question of each kind
    assert meta.load_input_example(str(tmp_path / "model")).to_dict("records") == [rows[0], rows[2]]
    assert meta.signature.inputs.input_names() == ["question", "type", "dataset"] and meta.signature.outputs
    loaded = mlflow.pyfunc.load_model(str(tmp_path / "model"))
    assert list(loaded.predict(pd.DataFrame(rows))) == expected
    with pytest.raises(Exception, match="missing inputs \\['dataset'\\]"):     # MLflow's schema enforcement
        loaded.predict(pd.DataFrame(rows).drop(columns="dataset"))
    with pytest.raises(ValueError, match="unknown FGBench type 'single_guess'"):
        textmodel.kind_of("single_guess")
