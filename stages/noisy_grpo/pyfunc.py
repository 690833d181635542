"""noisy_grpo's NoisyGRPO policy as an MLflow pyfunc model, defined from code (MLflow "models from
code"): the weights come from the ``weights`` artifact through ``torch.load(weights_only=True)``.

Input: a pandas DataFrame with a column ``q`` (the colour asked, 0..2; int64) and ``p0`` ..
``p{3*grid*grid-1}`` (the image, channel-major; float64 or float32), as
``stages.noisy_grpo.core.policy_frame(img, q)`` builds it. Output: the greedy chain of each row
(a list of four ints: three counts, then the answer).
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class NoisyGrpoPolicy(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        import json

        import torch

        from stages.noisy_grpo.core import Policy

        cfg = json.loads(open(context.artifacts["config"]).read())
        self.grid = cfg["grid"]
        self.model = Policy(cfg["grid"], cfg["vocab"], d_model=cfg["d_model"])
        self.model.load_state_dict(torch.load(context.artifacts["weights"], weights_only=True))
        self.model.eval()

    def predict(self, context, model_input, params=None):
        import torch

        n_pix = 3 * self.grid * self.grid
        cols = [f"p{i}" for i in range(n_pix)]
        missing = sorted(set(cols + ["q"]) - set(model_input.columns))
        if missing:
            raise ValueError(f"noisy_grpo policy: the input needs the columns q and p0..p{n_pix - 1}; missing {missing[:5]}")
        img = torch.tensor(model_input[cols].to_numpy(dtype="float32")).reshape(-1, 3, self.grid, self.grid)
        q = torch.tensor(model_input["q"].to_numpy(dtype="int64"))     # copies: pandas may hand out read-only views
        return self.model.sample(img, q, torch.Generator().manual_seed(0), greedy=True).tolist()


set_model(NoisyGrpoPolicy())
