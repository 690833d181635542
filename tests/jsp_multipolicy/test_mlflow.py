"""The trained networks as MLflow pyfunc models (stages/jsp_multipolicy/pyfunc.py): saved, loaded
back by MLflow, each gives the evaluate stage's best makespans (same samples, same seed), with a
dispatch sequence and start times that check; models.pt's bytes do not depend on where it is
written; a bad input is named."""
from __future__ import annotations

import numpy as np
import pytest

from stages.jsp_multipolicy.jsp import check_schedule, random_instances
from stages.jsp_multipolicy.policy import best_of, train_policy
from stages.jsp_multipolicy.store import entry, load_nets, save_mlflow, to_bytes

KW = {"steps": 2, "instances": 2, "samples": 8, "n_jobs": 4, "n_machines": 3, "hidden": 8, "lr": 1e-3,
      "kind": "jssp", "seed": 0}


def test_logged_models_reproduce_the_evaluate_makespans(tmp_path):
    import mlflow.pyfunc
    import pandas as pd

    nets = {"single": train_policy(1, tau=1.0, **KW)[0], "multi": train_policy(4, tau=0.02, **KW)[0]}
    models = {name: entry(net) for name, net in nets.items()}
    blob = to_bytes(models)
    assert blob == to_bytes(models)                       # byte-deterministic
    (tmp_path / "models.pt").write_bytes(blob)
    M, D = random_instances(3, 5, 4, np.random.default_rng(7))
    want = {name: best_of(net, M, D, 8, seed=11)[0] for name, net in load_nets(tmp_path / "models.pt").items()}
    save_mlflow(tmp_path / "mlflow", models, samples=8)
    frame = pd.DataFrame({"machines": M.tolist(), "durations": D.tolist()})
    for name in nets:
        loaded = mlflow.pyfunc.load_model(str(tmp_path / "mlflow" / name))
        got = loaded.predict(frame, params={"samples": 8, "seed": 11})
        assert list(got["makespan"]) == want[name].astype(int).tolist()
        for k, row in got.iterrows():
            assert sorted(row["sequence"]) == sorted(list(range(5)) * 4)
            assert check_schedule(M[k], D[k], np.array(row["start"])) == row["makespan"]
    with pytest.raises(Exception, match="missing \\['durations'\\]"):
        loaded.predict(frame.drop(columns="durations"))
    bad = frame.copy()
    bad.at[0, "machines"] = [[0, 0, 1, 2]] * 5
    with pytest.raises(Exception, match="row 0: machines must be"):
        loaded.predict(bad)
