"""fgbench's text models as one MLflow pyfunc model, defined from code (MLflow "models from
code"): nothing is unpickled; the weights come from the ``weights`` artifact through
``torch.load(weights_only=True)`` (stages/fgbench/textmodel.py).

Input: a pandas DataFrame with the columns ``question`` (the question text), ``type`` (one of the
nine FGBench types, e.g. ``single_bool_classification``) and ``dataset`` (scales the value
answers). Output: the answer of each question as the questions hold them (``"True"``/``"False"``,
or a float's repr), as ``data/fgbench/predictions/pairs.json``'s ``text`` column. The saved model
carries its signature (three string columns in, strings out) and an input example, the first test
question of each kind of the first verdict seed (textmodel.example_rows). Load it in the claimbench
environment (``pip install -e .``): the code it runs is ``stages.fgbench``.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class FGBenchText(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.fgbench.textmodel import load_mlflow

        self.models, self.cfg = load_mlflow(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        from stages.fgbench.textmodel import answer_all

        missing = {"question", "type", "dataset"} - set(model_input.columns)
        if missing:
            raise ValueError(f"fgbench-text: the input needs the columns question, type and dataset; "
                             f"missing {sorted(missing)}")
        rows = model_input[["question", "type", "dataset"]].to_dict("records")
        return answer_all(self.models, self.cfg["scale"], rows, self.cfg["buckets"], self.cfg["max_tokens"])


set_model(FGBenchText())
