"""hephaestus_qosd's mixture of conditional VAEs as an MLflow pyfunc model, defined from code (MLflow
"models from code"): nothing is unpickled; the weights come from the ``weights`` artifact through
``torch.load(weights_only=True)``.

Input: a pandas DataFrame with one row per edge and the columns ``f0`` .. ``f11`` (the edge's
condition, stages/hephaestus_qosd/cvae.edge_features). Output: the decoded raise over T of each
edge at the latent mean (z = 0), through the edge's most likely mixture component, clipped at 0.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class HephaestusMorph(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.hephaestus_qosd.cvae import load_weights

        self.model = load_weights(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        from stages.hephaestus_qosd.cvae import N_FEATURES, decode_mean

        cols = [f"f{i}" for i in range(N_FEATURES)]
        missing = sorted(set(cols) - set(model_input.columns))
        if missing:
            raise ValueError(f"hephaestus_qosd-morph: the input needs the columns f0..f{N_FEATURES - 1}; missing {missing}")
        return decode_mean(self.model, model_input[cols].to_numpy(dtype="float32")).tolist()


set_model(HephaestusMorph())
