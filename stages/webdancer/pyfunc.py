"""One webdancer agent (SFT, SFT+RL, RL from scratch or the coin-reward control) as an MLflow pyfunc
model, defined from code: the weights come from the ``weights`` artifact through
``torch.load(weights_only=True)``; nothing is unpickled.

Input: a pandas DataFrame with a column ``obs``: the observation tokens of each row (a list, the
layout of stages/webdancer/web.py). Output: the greedy action of each row (click i, back, answer v).
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class WebdancerAgent(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.webdancer.agent import load_files

        self.policy = load_files(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        import numpy as np
        import torch

        if "obs" not in model_input.columns:
            raise ValueError("webdancer agent: the input needs the column obs (observation tokens)")
        obs = torch.as_tensor(np.stack([np.asarray(v, dtype=np.int64) for v in model_input["obs"]]))
        with torch.no_grad():
            return self.policy(obs).argmax(1).tolist()


set_model(WebdancerAgent())
