"""M2's learned translator as an MLflow pyfunc model, defined from code (MLflow "models from
code"): nothing is unpickled; the weights come from the checkpoint artifact through
``torch.load(weights_only=True)``.

Input: a pandas DataFrame with a column ``latex``. Output: the Pyomo script predicted for each
row (greedy decoding). The scripts are untrusted text: run them only in a sandbox. Load it in
the claimbench environment (``pip install -e .``): the code it runs is ``stages.autoopt``.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class M2Pyfunc(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.autoopt.m2.seq2seq import load_checkpoint

        self.model, self.vocab = load_checkpoint(context.artifacts["checkpoint"])

    def predict(self, context, model_input, params=None):
        from stages.autoopt.m2.seq2seq import translate

        return translate(self.model, self.vocab, [str(s) for s in model_input["latex"]], "cpu")


set_model(M2Pyfunc())
