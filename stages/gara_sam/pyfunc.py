"""gara_sam's GaRA-adapted segmenter as an MLflow pyfunc model, defined from code (MLflow "models from
code"): nothing is unpickled; the weights come from the ``weights`` artifact (an npz of float arrays).

Input: a pandas DataFrame with a column ``image``: one flattened RGB image a row (3 x size x size
values in [0, 1], channel first). Output: one list a row, the flattened foreground probabilities
(size x size).
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class GaraSegmenter(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        import json

        import numpy as np

        from stages.gara_sam.net import build_arm, load_arrays

        cfg = json.loads(open(context.artifacts["config"]).read())
        self.model, self.gated = build_arm(cfg["arm"], cfg["width"], cfg["rank"], cfg["alpha"], cfg["tau"],
                                           cfg["gate_bias"])
        load_arrays(self.model, np.load(context.artifacts["weights"]), cfg["arm"])

    def predict(self, context, model_input, params=None):
        import numpy as np
        import torch

        from stages.gara_sam.net import predict

        if "image" not in model_input.columns:
            raise ValueError("gara_sam segmenter: the input needs a column 'image' (flattened 3 x size x size)")
        x = np.stack([np.asarray(v, dtype=np.float32) for v in model_input["image"]])
        side = int(round((x.shape[1] / 3) ** 0.5))
        if 3 * side * side != x.shape[1]:
            raise ValueError(f"gara_sam segmenter: an image has {x.shape[1]} values, not 3 x size x size")
        probs, _ = predict(self.model, torch.from_numpy(x.reshape(-1, 3, side, side)), gated=self.gated)
        return probs.reshape(len(x), -1).tolist()


set_model(GaraSegmenter())
