"""dyna_rend's fine-tuned dynarend policy as an MLflow pyfunc model, defined from code (MLflow
"models from code"): nothing is unpickled; the weights come from the ``weights`` artifact through
``torch.load(weights_only=True)``.

Input: a pandas DataFrame, one row per scene, with the columns ``view_<camera>`` for each input
camera (its RGB-D view, channel-major, flattened) and ``a``, ``b`` (colour ids of "put a on b").
Output: the place voxel [x, y, z] of each row (the arg-max of the action value map). The saved
model carries its signature (each view an array of doubles, ``a`` and ``b`` int64; the output an
array of ints per row) and an input example, the first three demos of the first verdict seed
(pyfunc_io.example_frame).
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class DynaRendPolicy(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.dyna_rend.pyfunc_io import load_policy

        self.model, self.cfg = load_policy(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        from stages.dyna_rend.pyfunc_io import predict_place

        return predict_place(self.model, self.cfg, model_input)


set_model(DynaRendPolicy())
