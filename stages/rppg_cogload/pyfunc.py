"""rppg_cogload's load classifier as an MLflow pyfunc model, defined from code (MLflow "models from
code"): logistic regression on remote PPG + remote respiration + blink features, read from the
``spec`` artifact (JSON: feature names, scaler mean and scale, coefficients, intercept).

Input: a pandas DataFrame with the feature columns named in the spec (remote_hr, remote_rmssd, ...),
each already z-scored within its participant (cogload.zscore_within). Output: the probability of
high cognitive load, one per row.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class LoadClassifier(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        import json

        with open(context.artifacts["spec"]) as f:
            self.spec = json.load(f)

    def predict(self, context, model_input, params=None):
        import numpy as np

        cols = self.spec["features"]
        missing = sorted(set(cols) - set(model_input.columns))
        if missing:
            raise ValueError(f"rppg_cogload-load-classifier: the input needs the columns {cols}; missing {missing}")
        x = (model_input[cols].to_numpy(dtype=float) - np.array(self.spec["mean"])) / np.array(self.spec["scale"])
        return (1 / (1 + np.exp(-(x @ np.array(self.spec["coef"]) + self.spec["intercept"])))).tolist()


set_model(LoadClassifier())
