"""One rl_vla policy (SFT, PPO, GRPO, DPO or the PPO ablation) as an MLflow pyfunc model, defined from
code (MLflow "models from code"): nothing is unpickled; the weights come from the ``weights`` artifact
through ``torch.load(weights_only=True)``.

Input: a pandas DataFrame with one row per observation and the columns ``image`` (the wrist view,
channel-first uint8 values flattened to a list) and ``instruction`` (the command's word ids, a list,
stages/rl_vla/env.VOCAB). Output: the greedy action of each row (0 up, 1 down, 2 left, 3 right,
4 pick, 5 place).
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class RlVlaPolicy(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.rl_vla.policy import load_files

        self.policy = load_files(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        import numpy as np

        from stages.rl_vla.policy import greedy_actions

        missing = sorted({"image", "instruction"} - set(model_input.columns))
        if missing:
            raise ValueError(f"rl_vla policy: the input needs the columns image and instruction; missing {missing}")
        shape = self.policy.observation_space["image"].shape
        image = np.stack([np.asarray(v, dtype=np.uint8).reshape(shape) for v in model_input["image"]])
        instr = np.stack([np.asarray(v, dtype=np.int64) for v in model_input["instruction"]])
        return greedy_actions(self.policy, image, instr).tolist()


set_model(RlVlaPolicy())
