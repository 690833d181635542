"""labyrinth's imitation policies (behaviour cloning, DAgger) as MLflow pyfunc models, defined from
code ("models from code"): nothing is unpickled; the weights come from the ``weights`` artifact
through ``torch.load(weights_only=True)``, the sizes from ``config``.

Input: a pandas DataFrame with one row per observation and the columns ``x0`` .. ``x{12 n^2 - 1}``
(the flattened (12, n, n) planes of stages/labyrinth/maze.encode; float64 or float32). Output: the
greedy action (0 up, 1 right, 2 down, 3 left) of each row. The saved signature (inferred from the
input example: the start observations of three test mazes, train.input_example) enforces these
columns.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class LabyrinthPolicy(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.labyrinth.imitate import load_policy

        self.net, self.n = load_policy(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        from stages.labyrinth.imitate import act

        cols = [f"x{i}" for i in range(12 * self.n * self.n)]
        missing = sorted(set(cols) - set(model_input.columns))
        if missing:
            raise ValueError(f"labyrinth policy: the input needs the columns x0..x{len(cols) - 1}; "
                             f"{len(missing)} missing")
        return act(self.net, model_input[cols].to_numpy(dtype="float32").reshape(-1, 12, self.n, self.n)).tolist()


set_model(LabyrinthPolicy())
