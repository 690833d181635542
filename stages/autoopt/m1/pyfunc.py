"""M1 as an MLflow pyfunc model, defined from code (MLflow "models from code"): nothing is
unpickled; the weights come from the checkpoint artifact through ``torch.load(weights_only=True)``.

Input: a pandas DataFrame with a column ``image`` (PNG bytes, or a 2-D uint8 array). Output: the
LaTeX predicted for each image (greedy decoding). Load it in the claimbench environment
(``pip install -e .``): the code it runs is ``stages.autoopt``.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class M1Pyfunc(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.autoopt.m1.model import load_checkpoint

        self.model, self.vocab = load_checkpoint(context.artifacts["checkpoint"])

    def predict(self, context, model_input, params=None):
        import io

        import numpy as np
        import torch
        from PIL import Image

        from stages.autoopt.data.render import to_input

        cfg = self.model.cfg
        arrays = []
        for item in model_input["image"]:
            img = np.asarray(Image.open(io.BytesIO(item)).convert("L")) if isinstance(item, bytes) else np.asarray(item)
            arrays.append(to_input(img, cfg.height, cfg.width))
        x = torch.from_numpy(np.stack(arrays)).unsqueeze(1)
        ids = self.model.greedy(x, self.vocab.bos, self.vocab.eos, cfg.max_len)
        return [self.vocab.decode(s) for s in ids]


set_model(M1Pyfunc())
