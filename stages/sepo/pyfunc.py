"""sepo's masked discrete diffusion model (pre-trained or SEPO fine-tuned) as an MLflow pyfunc model,
defined from code (MLflow "models from code"): nothing is unpickled; the weights come from the
``weights`` artifact through ``torch.load(weights_only=True)``.

Input: a pandas DataFrame with the columns ``seed`` and ``n``, one row per request. Output: for each
row, ``n`` sequences over ACGT sampled with the random-order unmasking sampler from that seed.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class SepoSampler(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.sepo.dd import load_model

        self.model = load_model(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        from stages.sepo.dd import sample_strings

        missing = sorted({"seed", "n"} - set(model_input.columns))
        if missing:
            raise ValueError(f"sepo sampler: the input needs the columns seed and n; missing {missing}")
        return [sample_strings(self.model, int(n), int(s)) for s, n in zip(model_input["seed"], model_input["n"])]


set_model(SepoSampler())
