"""An mpo policy (trained by DPO or by the discovered loss) as an MLflow pyfunc model, defined from
code (MLflow "models from code"): nothing is unpickled; the weights come from the ``weights``
artifact through ``torch.load(weights_only=True)``.

Input: a pandas DataFrame with one row per Pendulum-v1 observation and the columns ``cos``, ``sin``
and ``thdot``. Output: the torque of the policy's most likely action bin for each row (the
evaluate stage samples the policy instead; both are reported).
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model

COLUMNS = ["cos", "sin", "thdot"]


class MpoPolicy(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.mpo.po import load_policy

        self.policy = load_policy(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        import torch

        from stages.mpo.po import TORQUES

        missing = [c for c in COLUMNS if c not in model_input.columns]
        if missing:
            raise ValueError(f"mpo-policy: the input needs the columns {COLUMNS}; missing {missing}")
        x = torch.tensor(model_input[COLUMNS].to_numpy(dtype="float32"))
        with torch.no_grad():
            return TORQUES[self.policy(x).argmax(1).numpy()].tolist()


set_model(MpoPolicy())
