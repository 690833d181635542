"""The mtl_kd student as an MLflow pyfunc model, defined from code (MLflow "models from code"):
nothing is unpickled; the weights come from the ``weights`` artifact through
``torch.load(weights_only=True)`` (stages/mtl_kd/models.py).

Input: a pandas DataFrame, one row an instance with ``x``, ``y``, ``demand``, ``tw_start``,
``tw_end`` (lists, depot first; time windows in the units of stages/mtl_kd/vrp.py) and
``capacity``, ``open``, ``tw`` (the variant flags). Output: a frame with ``cost`` and ``routes``
(a JSON list of routes, customer indices 1..n), from the student's greedy multi-start.
Load it in the claimbench environment (``pip install -e .``): the code it runs is ``stages.mtl_kd``.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class MtlKdStudent(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.mtl_kd.models import load_weights

        nets, _ = load_weights(context.artifacts["weights"])
        self.student = nets["student"]

    def predict(self, context, model_input, params=None):
        import json

        import pandas as pd

        from stages.mtl_kd.models import instances_from_frame, solve

        cost, routes = solve(self.student, instances_from_frame(model_input))
        return pd.DataFrame({"cost": cost, "routes": [json.dumps(r) for r in routes]})


set_model(MtlKdStudent())
