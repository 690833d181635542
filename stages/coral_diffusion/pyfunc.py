"""coral_diffusion's class-conditional DDPM as an MLflow pyfunc model, defined from code (MLflow
"models from code"): nothing is unpickled; the weights come from the ``weights`` artifact through
``torch.load(weights_only=True)``, the sizes from ``config``.

Input: a pandas DataFrame with a column ``label`` (digit 0..9, one row per image wanted) and
optionally ``seed`` (the first row's value seeds the sampler's noise; 0 when absent). Output: one
list of 64 pixel values in [0, 16] (scikit-learn's digits scale) per row, sampled by DDIM with the
config's ``sample_steps``.
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class CoralDDPM(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.coral_diffusion.ddpm import load_weights

        self.model, self.config = load_weights(context.artifacts["weights"], context.artifacts["config"])

    def predict(self, context, model_input, params=None):
        from stages.coral_diffusion.ddpm import sample

        if "label" not in model_input.columns:
            raise ValueError("coral_diffusion: the input needs a column 'label' (digits 0..9)")
        seed = int(model_input["seed"].iloc[0]) if "seed" in model_input.columns and len(model_input) else 0
        x = sample(self.model, model_input["label"].to_numpy(), T=self.config["T"],
                   sample_steps=self.config["sample_steps"], seed=seed)
        return ((x + 1.0) * 8.0).tolist()


set_model(CoralDDPM())
