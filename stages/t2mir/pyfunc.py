"""t2mir's in-context transformers as MLflow pyfunc models, defined from code ("models from code"):
nothing is unpickled; the weights come from the ``weights`` artifact through
``torch.load(weights_only=True)``, the sizes and the variant from ``config``.

Input: a pandas DataFrame, one row per query, with the columns of
``stages.t2mir.icl.context_columns(k)``: the ``k`` context transitions ``t{i}_s_x, t{i}_s_y, t{i}_a,
t{i}_r, t{i}_s2_x, t{i}_s2_y`` of one task, then the query cell ``q_x, q_y`` (float64, as
``icl.batch_to_rows`` writes them). Output: the greedy action (0 +x, 1 -x, 2 +y, 3 -y, 4 stay)
for each row. The saved model carries its signature (those columns as double, the action long)
and an input example, a context of each of the first verdict seed's first three held-out tasks
(``icl.example_rows``).
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class InContextPolicy(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.t2mir.icl import load_model

        self.model, self.cfg = load_model(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        import torch

        from stages.t2mir.icl import context_columns, encode, rows_to_batch

        k, size = self.cfg["k"], self.cfg["size"]
        cols = context_columns(k)
        missing = [c for c in cols if c not in model_input.columns]
        if missing:
            raise ValueError(f"t2mir policy: the input needs the {len(cols)} columns of context_columns({k}); "
                             f"{len(missing)} missing, first {missing[0]!r}")
        batch = rows_to_batch(model_input[cols].to_numpy(dtype="float64"), k)
        with torch.no_grad():
            logits, _ = self.model(encode(batch, size))
        return logits.argmax(-1).tolist()


set_model(InContextPolicy())
