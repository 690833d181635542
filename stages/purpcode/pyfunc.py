"""purpcode's PurpCode-trained code model as an MLflow pyfunc model, defined from code (MLflow
"models from code"): nothing is unpickled; the weights come from the ``weights`` artifact through
``torch.load(weights_only=True)``.

Input: a pandas DataFrame with the columns ``task``, ``ctx1``, ``ctx2`` (tokens of the template
language, stages/purpcode/codelang.py). Output: for each row, the greedy answer: the rule it names
(or "") and the Python source it renders to, or "REFUSE".
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class PurpcodeModel(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.purpcode.policy import load_bytes

        with open(context.artifacts["weights"], "rb") as fh:
            self.model = load_bytes(fh.read())

    def predict(self, context, model_input, params=None):
        from stages.purpcode.policy import greedy_answers

        missing = sorted({"task", "ctx1", "ctx2"} - set(model_input.columns))
        if missing:
            raise ValueError(f"purpcode-coder: the input needs the columns task, ctx1, ctx2; missing {missing}")
        prompts = list(zip(model_input["task"], model_input["ctx1"], model_input["ctx2"]))
        return greedy_answers(self.model, prompts)


set_model(PurpcodeModel())
