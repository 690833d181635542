"""dima's world models as an MLflow pyfunc model, defined from code (MLflow "models from code"):
nothing is unpickled; the weights come from the ``weights`` artifact (``torch.load(weights_only=True)``).

Input: a pandas DataFrame with the state columns ``s0`` .. ``s{6N-1}`` (agent positions, velocities,
landmark positions) and the action columns ``a0`` .. ``a{N-1}`` (0..4), optionally ``model``
(``seq``, the default, ``joint`` or ``joint_chain``; a missing value means ``seq``). Output: one row
per input, the predicted next state ``s0`` .. and the reward ``r`` of the main run's model. The
saved signature (inferred from the input example: three held-out transitions) enforces these
columns: states float, actions integer, ``model`` an optional string.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class DimaWorldModel(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.dima.pyfunc_io import load_models

        self.models = {k.split(".", 1)[1]: m for k, m in
                       load_models(context.artifacts["weights"], context.artifacts["config"]).items() if k.startswith("main.")}

    def predict(self, context, model_input, params=None):
        import numpy as np
        import pandas as pd

        m0 = self.models["seq"]
        scols, acols = [f"s{i}" for i in range(m0.d)], [f"a{i}" for i in range(m0.n)]
        missing = sorted(set(scols + acols) - set(model_input.columns))
        if missing:
            raise ValueError(f"dima world model: the input needs the columns {scols[0]}..{scols[-1]}, "
                             f"{acols[0]}..{acols[-1]}; missing {missing}")
        kinds = (model_input["model"].fillna("seq") if "model" in model_input.columns
                 else pd.Series(["seq"] * len(model_input), index=model_input.index))
        bad = sorted(set(kinds) - set(self.models))
        if bad:
            raise ValueError(f"dima world model: model must be one of {sorted(self.models)}, got {bad}")
        s, a = model_input[scols].to_numpy(float), model_input[acols].to_numpy(np.int64)
        s2, r = np.zeros_like(s), np.zeros(len(s))
        for k in set(kinds):
            rows = np.asarray(kinds == k)
            s2[rows], r[rows] = self.models[k].predict(s[rows], a[rows])
        out = pd.DataFrame(s2, columns=scols)
        out["r"] = r
        return out


set_model(DimaWorldModel())
