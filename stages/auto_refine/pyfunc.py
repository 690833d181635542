"""auto_refine's trained AutoRefine policy (the candidate scorer) as an MLflow pyfunc model, defined
from code (MLflow "models from code"): nothing is unpickled; the weights come from the ``weights``
artifact through ``torch.load(weights_only=True)``.

Input: a pandas DataFrame with one row per candidate, the columns ``decision`` (which decision the
candidate belongs to, an integer) and ``f0`` .. ``f{n-1}`` (stages/auto_refine/refine.features;
float64 or float32). Output: each candidate's probability of being chosen within its decision. The
saved signature (inferred from the input example: the candidates of one real decision,
refine.input_example) enforces these columns and types.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class AutoRefinePolicy(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.auto_refine.refine import load_weights

        self.model = load_weights(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        import torch

        n = self.model.net[0].in_features
        cols = [f"f{i}" for i in range(n)]
        missing = sorted(set(cols + ["decision"]) - set(model_input.columns))
        if missing:
            raise ValueError(f"auto_refine-policy: the input needs the columns decision, f0..f{n - 1}; missing {missing}")
        x = torch.tensor(model_input[cols].to_numpy(dtype="float32"))
        with torch.no_grad():
            s = self.model.net(x).squeeze(-1)
        out = torch.zeros_like(s)
        dec = model_input["decision"].to_numpy()
        for d in sorted(set(dec.tolist())):
            idx = torch.tensor((dec == d).nonzero()[0])
            out[idx] = torch.softmax(s[idx], 0)
        return out.tolist()


set_model(AutoRefinePolicy())
