"""The FOARL model as an MLflow pyfunc model, defined from code (MLflow "models from code"):
nothing is unpickled; the weights come from the ``weights`` artifact through
``torch.load(weights_only=True)``.

Input: a pandas DataFrame with the columns ``problem`` (``tsp`` or ``kp``) and ``instance``
(TSP: a list of (x, y) integer points in [0, 99]; knapsack: ``{"items": [(w, v), ...], "cap": c}``).
Output: the greedy decoded solution of each row as written (a closed tour ``[0, .., 0]`` or the
chosen items), with no feasibility mask, so it may be infeasible. Its signature is written out
(store.signature: ``instance`` is ``any``, as its type depends on the problem). Load it in the claimbench
environment (``pip install -e .``): the code it runs is ``stages.llm_co_foarl``.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class FoarlSolver(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.llm_co_foarl.store import load_model

        self.model, self.cfg = load_model(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        from stages.llm_co_foarl.store import solve_rows

        missing = {"problem", "instance"} - set(model_input.columns)
        if missing:
            raise ValueError(f"llm_co_foarl-foarl: the input needs the columns problem and instance; "
                             f"missing {sorted(missing)}")
        return solve_rows(self.model, model_input.to_dict("records"))


set_model(FoarlSolver())
