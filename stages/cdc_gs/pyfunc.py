"""cdc_gs's fitted 2-D Gaussian splats as an MLflow pyfunc model, defined from code (MLflow "models
from code"): nothing is unpickled; the primitives come from the ``splats`` artifact (an npz read
with allow_pickle=False).

Input: a pandas DataFrame with the columns ``image`` (a name the study fitted, e.g. ``camera``) and
``method`` (``adc`` or ``cdc``). Output: one rendered grey image per row, as nested lists
(size x size), by the study's own renderer (stages/cdc_gs/splat.render_export).
"""
from __future__ import annotations

import mlflow.pyfunc
from mlflow.models import set_model


class CdcGsSplats(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from stages.cdc_gs.pyfunc_io import load_splats

        self.splats = load_splats(context.artifacts["splats"])

    def predict(self, context, model_input, params=None):
        from stages.cdc_gs.pyfunc_io import render_rows

        return render_rows(self.splats, model_input)


set_model(CdcGsSplats())
