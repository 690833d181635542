"""bitmark's bitwise autoregressive model as an MLflow pyfunc model, defined from code (MLflow
"models from code"): nothing is unpickled; the weights come from the ``weights`` artifact through
``torch.load(weights_only=True)``, the architecture and the watermark's settings from ``config``.

Two uses, chosen by the input's columns:

- **sample**: a column ``label`` (digit classes 0..9), one row per image wanted; params ``delta``
  (the watermark's bias, default 0: no watermark) and ``seed`` (default 0). Output: one row per
  image with the pixel levels ``p0`` .. ``p63`` (0..15) and the image's detector score ``z``.
- **score**: the columns ``b0`` .. ``b255`` (an image's bits, as ``stages/bitmark/wm.encode`` writes
  them). Output: a column ``z``, the BitMark z-score of each row under the model's key.

The saved model carries its signature (``label`` and ``b0`` .. ``b255`` as optional integer
columns, one set or the other; the params ``delta`` and ``seed``; the sampling output) and an input
example, three real labels with ``{"delta": 0.0, "seed": 0}`` (``stages/bitmark/train.save_model``).
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class BitmarkAR(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.bitmark.ar import load_weights
        from stages.bitmark.wm import green_table

        self.model, self.cfg = load_weights(context.artifacts["weights"], context.artifacts["config"])
        self.table = green_table(self.cfg["key"], self.cfg["ngram"])

    def predict(self, context, model_input, params=None):
        import numpy as np
        import pandas as pd

        from stages.bitmark.ar import sample
        from stages.bitmark.wm import N_BITS, N_PIXELS, decode, z_scores

        ngram = self.cfg["ngram"]
        bit_cols = [f"b{i}" for i in range(N_BITS)]
        if set(bit_cols) <= set(model_input.columns):
            bits = model_input[bit_cols].to_numpy()
            if not np.isin(bits, (0, 1)).all():
                raise ValueError("bitmark: the columns b0..b255 must hold bits (0 or 1)")
            return pd.DataFrame({"z": z_scores(bits, self.table, ngram)})
        if "label" not in model_input.columns:
            raise ValueError("bitmark: the input needs a column `label` (to sample) or the columns b0..b255 (to score)")
        labels = model_input["label"].to_numpy()
        if not np.isin(labels, np.arange(10)).all():
            raise ValueError("bitmark: `label` must hold digit classes 0..9")
        p = dict(params or {})
        delta, seed = float(p.get("delta", 0.0)), int(p.get("seed", 0))
        if delta < 0:
            raise ValueError(f"bitmark: delta must be >= 0, got {delta}")
        bits = sample(self.model, labels, seed, self.table, ngram, delta)
        out = pd.DataFrame(decode(bits), columns=[f"p{i}" for i in range(N_PIXELS)])
        out["z"] = z_scores(bits, self.table, ngram)
        return out


set_model(BitmarkAR())
