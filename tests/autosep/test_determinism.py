"""autosep end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, the figures the claims read are there, and the registered model
predicts what the black box does."""
from __future__ import annotations

import pytest

from tests.helpers import assert_claims_read_every_seed

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/autosep/model/MLmodel",)


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("autosep", volatile=VOLATILE)
    m = out["metrics"]
    assert m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"}
    assert_claims_read_every_seed("autosep", m, [0, 1])
    assert (out["root"] / "reports/autosep/accuracy.png").stat().st_size > 5_000


@pytest.mark.study
def test_registered_model_predicts_like_the_black_box(smoke_built):
    import json

    import mlflow.pyfunc
    import numpy as np
    import pandas as pd

    from stages.autosep.data import load
    from stages.autosep.sim import GROUPS, Blackbox

    root = smoke_built[0]
    model = mlflow.pyfunc.load_model(str(root / "data/autosep/model"))
    x, y = load()
    sel = np.flatnonzero(np.isin(y, GROUPS[2]))[:30]
    df = pd.DataFrame(np.round(x[sel] * 16), columns=[f"p{i}" for i in range(64)]).assign(group=2)
    cfg = json.loads((root / "data/autosep/model/artifacts/config.json").read_text())
    bb = Blackbox(np.asarray(cfg["prototypes"]), **cfg["blackbox"])
    want = bb.classify(x[sel], tuple(cfg["prompts"][2]), GROUPS[2], np.random.default_rng(cfg["seed"]))
    assert model.predict(df) == want.tolist()
    with pytest.raises(Exception, match="group must be in 0..3"):
        model.predict(df.assign(group=7))
