"""diff_purify's AAOpt defence (purify, then classify) as an MLflow pyfunc model, defined from code
(MLflow "models from code"): nothing is unpickled; the weights come from the ``weights`` artifact
through ``torch.load(weights_only=True)``.

Input: a pandas DataFrame with one row per 8x8 digit and the columns ``p0`` .. ``p63`` (pixels in
[0, 1], row-major). Output: the predicted class of each row after AAOpt purification (the prior
score plus the learned adversarial-perturbation score, the networks of the first verdict seed; a
fixed seed, so the same input gives the same answer), a list of ints. The saved model carries its
signature (``p0`` .. ``p63`` double, float32 pixels accepted too; output long) and an input
example, the first three test digits of that seed.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class DiffPurifyAAOpt(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.diff_purify.core import load_weights

        self.nets, self.config = load_weights(context.artifacts["weights"])

    def predict(self, context, model_input, params=None):
        import torch

        from stages.diff_purify.core import D_IN, purify

        cols = [f"p{i}" for i in range(D_IN)]
        missing = sorted(set(cols) - set(model_input.columns), key=lambda c: int(c[1:]))
        if missing:
            raise ValueError(f"diff_purify-aaopt: the input needs the columns p0..p{D_IN - 1}; missing {missing}")
        x = torch.as_tensor(model_input[cols].to_numpy(dtype="float32"))
        g = torch.Generator().manual_seed(int(self.config["model_seed"]))
        pp = self.config["purify"]
        xp = purify(x, self.nets["prior"], self.nets["pert"], pp["steps"], pp["sigma_max"], pp["sigma_min"], pp["eta"],
                    pp["lam"], pp["pert_sigma"], generator=g)
        with torch.no_grad():
            return self.nets["classifier"](xp).argmax(1).tolist()


set_model(DiffPurifyAAOpt())
