"""A reward_instruct sampler (the teacher DDPM or the R0 few-step generator) as an MLflow pyfunc
model, defined from code (MLflow "models from code"): nothing is unpickled; the weights come from
the ``weights`` artifact through ``torch.load(weights_only=True)``.

Input: a pandas DataFrame with int64 columns ``class`` (digits 0-9, one row per image) and
``seed`` (the first row's seed draws the noise of the whole batch). Output: one list of 64 pixels
in [-1, 1] (an 8x8 image, row-major) per row, sampled by deterministic DDIM in the number of steps
saved with the weights (``sample_steps``). The saved model carries its signature (both columns
required, MLflow enforces it) and an input example, three real rows (data.example_input).
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class DigitSampler(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.reward_instruct.diffusion import load_epsnet

        self.net, self.abar, self.config = load_epsnet(context.artifacts["weights"])

    def predict(self, context, model_input, params=None):
        import torch

        from stages.reward_instruct.diffusion import N_CLASSES, sample

        if "class" not in model_input.columns:
            raise ValueError("reward_instruct sampler: the input needs a column 'class' (digits 0-9)")
        c = torch.tensor(model_input["class"].to_numpy(), dtype=torch.long)
        if len(c) and (int(c.min()) < 0 or int(c.max()) >= N_CLASSES):
            raise ValueError(f"reward_instruct sampler: classes must be in 0..{N_CLASSES - 1}")
        seed = int(model_input["seed"].iloc[0]) if "seed" in model_input.columns and len(c) else 0
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            x = sample(self.net, self.abar, c, int(self.config["sample_steps"]), gen)
        return x.tolist()


set_model(DigitSampler())
