"""autosep's black box with AutoSEP's description prompts as an MLflow pyfunc model, defined from
code (MLflow "models from code"): nothing is unpickled; the class prototypes, the black box's
constants and the learned prompt of each group come from the ``config`` artifact (JSON).

Input: a pandas DataFrame with the columns ``p0`` .. ``p63`` (an 8x8 digit's pixels, 0..16 floats as
in scikit-learn's digits) and ``group`` (0..3, an integer: the fine-grained group of
stages/autosep/sim.GROUPS). Output: the predicted digit of each row, among its group's classes,
under the group's prompt. The saved signature (inferred from the input example: three of the first
seed's test images, train.input_example) enforces these columns and types.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class AutosepClassifier(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        import json

        import numpy as np

        from stages.autosep.sim import Blackbox

        cfg = json.loads(open(context.artifacts["config"]).read())
        self.bb = Blackbox(np.asarray(cfg["prototypes"]), **cfg["blackbox"])
        self.prompts = [tuple(p) for p in cfg["prompts"]]
        self.seed = int(cfg["seed"])

    def predict(self, context, model_input, params=None):
        import numpy as np

        from stages.autosep.sim import GROUPS

        cols = [f"p{i}" for i in range(64)]
        missing = sorted(set(cols + ["group"]) - set(model_input.columns), key=str)
        if missing:
            raise ValueError(f"autosep-blackbox-autosep: the input needs the columns p0..p63 and group; missing {missing}")
        x = model_input[cols].to_numpy(dtype=float) / 16.0
        groups = model_input["group"].to_numpy()
        bad = sorted(set(groups.tolist()) - set(range(len(GROUPS))))
        if bad:
            raise ValueError(f"autosep-blackbox-autosep: group must be in 0..{len(GROUPS) - 1}, got {bad}")
        out = np.zeros(len(x), dtype=int)
        rng = np.random.default_rng(self.seed)
        for g in sorted(set(groups.tolist())):
            rows = groups == g
            out[rows] = self.bb.classify(x[rows], self.prompts[g], GROUPS[g], rng)
        return out.tolist()


set_model(AutosepClassifier())
