"""M1 as an MLflow pyfunc model, defined from code (MLflow "models from code"): nothing is
unpickled; the weights come from the checkpoint artifact through ``torch.load(weights_only=True)``.

Input: a pandas DataFrame with a column ``image`` (PNG bytes, or a 2-D uint8 array). Output: the
LaTeX predicted for each image (greedy decoding, either design: m1/reader.py). Load it in the claimbench environment
(``pip install -e .``): the code it runs is ``stages.autoopt``.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class M1Pyfunc(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.autoopt.m1.reader import load_reader

        self.reader = load_reader(context.artifacts["checkpoint"])

    def predict(self, context, model_input, params=None):
        import io

        import numpy as np
        from PIL import Image

        arrays = []
        for item in model_input["image"]:
            img = Image.open(io.BytesIO(item)).convert("L") if isinstance(item, bytes) else item
            arrays.append(np.asarray(img, dtype=np.uint8))
        return self.reader.read(arrays)


set_model(M1Pyfunc())
