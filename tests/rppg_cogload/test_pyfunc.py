"""rppg_cogload's load classifier as an MLflow pyfunc: saved through save_pyfunc from a hand-made spec,
loaded back, it gives the logistic function computed by hand, and names missing columns."""
from __future__ import annotations

import json

import numpy as np
import pytest


def test_pyfunc_predicts_the_logistic_by_hand(tmp_path):
    import mlflow.pyfunc
    import pandas as pd

    from stages.common.mlmodel import pinned, save_pyfunc

    spec = {"features": ["a", "b"], "mean": [1.0, 0.0], "scale": [2.0, 1.0], "coef": [1.5, -0.5], "intercept": 0.25}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    save_pyfunc(tmp_path / "model", "stages/rppg_cogload/pyfunc.py", {"spec": tmp_path / "spec.json"},
                requirements=pinned("numpy", "pandas"), input_example=pd.DataFrame({"a": [0.5], "b": [1.0]}))
    model = mlflow.pyfunc.load_model(str(tmp_path / "model"))
    x = pd.DataFrame({"a": [1.0, 5.0], "b": [0.0, 2.0]})
    z = np.array([0.25, 1.5 * 2.0 - 0.5 * 2.0 + 0.25])
    assert np.allclose(model.predict(x), 1 / (1 + np.exp(-z)))
    with pytest.raises(Exception, match="missing inputs \\['b'\\]"):   # the signature's schema check
        model.predict(pd.DataFrame({"a": [1.0]}))
