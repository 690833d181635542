"""One trained jsp_multipolicy network (``single`` = SLIM or ``multi`` = K policies) as an MLflow
pyfunc model, defined from code (MLflow "models from code"): nothing is unpickled; the weights
come from the ``weights`` artifact through ``torch.load(weights_only=True)``.

Input: a pandas DataFrame with the columns ``machines`` and ``durations``, each row an
(n_jobs, n_machines) nested list of ints (job j's k-th operation runs on machine
``machines[j][k]`` for ``durations[j][k]``). Params (optional): ``samples`` (sampled schedules
per shop, split over the network's policies; default the evaluate stage's) and ``seed``
(default 0). Output: a DataFrame with ``makespan``, ``sequence`` (the best dispatch sequence,
job ids) and ``start`` (its start times). Load it in the claimbench environment
(``pip install -e .``): the code it runs is ``stages.jsp_multipolicy``.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class JspDispatcher(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        import json
        from pathlib import Path

        from stages.common.device import limit_threads
        from stages.jsp_multipolicy.store import load_nets

        limit_threads(1)
        self.cfg = json.loads(Path(context.artifacts["config"]).read_text())
        self.net = load_nets(context.artifacts["weights"])[self.cfg["name"]]

    def predict(self, context, model_input, params=None):
        from stages.jsp_multipolicy.store import solve_frame

        params = params or {}
        return solve_frame(self.net, model_input, int(params.get("samples", self.cfg["samples"])),
                           int(params.get("seed", 0)))


set_model(JspDispatcher())
