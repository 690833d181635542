"""The trained networks as MLflow pyfunc models (stages/jsp_multipolicy/pyfunc.py): saved, loaded
back by MLflow, each gives the evaluate stage's best makespans (same samples, same seed), with a
dispatch sequence and start times that check, and carries its signature and input example;
models.pt's bytes do not depend on where it is
written; a bad input is named."""
from __future__ import annotations

import numpy as np
import pytest

from stages.jsp_multipolicy.jsp import check_schedule, random_instances
from stages.jsp_multipolicy.l2d import train_l2d
from stages.jsp_multipolicy.policy import best_of, train_arm
from stages.jsp_multipolicy.store import entry, load_models, load_nets, models_bytes, save_mlflow, to_bytes

KW = {"steps": 2, "instances": 2, "samples": 8, "n_jobs": 4, "n_machines": 3, "hidden": 8, "lr": 1e-3,
      "kind": "jssp", "n_policies": 4, "tau": 0.02}


def test_logged_models_reproduce_the_evaluate_makespans(tmp_path):
    import mlflow.pyfunc
    import pandas as pd
    from mlflow.models import Model

    nets = {arm: train_arm(arm, [1000], **KW)[0][0] for arm in ("single", "multi")}
    models = {name: entry(net) for name, net in nets.items()}
    blob = to_bytes(models)
    assert blob == to_bytes(models)                       # byte-deterministic
    (tmp_path / "weights.pt").write_bytes(blob)
    M, D = random_instances(3, 5, 4, np.random.default_rng(7))
    want = {name: best_of([net], M, D, 8, [11])[0][0] for name, net in load_nets(tmp_path / "weights.pt").items()}
    save_mlflow(tmp_path / "mlflow", models, 8, M[:2], D[:2])
    frame = pd.DataFrame({"machines": M.tolist(), "durations": D.tolist()})
    for name in nets:
        path = str(tmp_path / "mlflow" / name)
        meta = Model.load(path)
        assert {c.name for c in meta.signature.inputs.inputs} == {"machines", "durations"}
        assert [c.name for c in meta.signature.outputs.inputs] == ["makespan", "sequence", "start"]
        assert {p.name: p.default for p in meta.signature.params.params} == {"samples": 8, "seed": 0}
        assert meta.load_input_example(path)["machines"].tolist() == M[:2].tolist()
        loaded = mlflow.pyfunc.load_model(path)
        got = loaded.predict(frame, params={"samples": 8, "seed": 11})
        assert list(got["makespan"]) == want[name].astype(int).tolist()
        for k, row in got.iterrows():
            assert sorted(row["sequence"]) == sorted(list(range(5)) * 4)
            assert check_schedule(M[k], D[k], np.array(row["start"])) == row["makespan"]
    with pytest.raises(Exception, match="missing inputs \\['durations'\\]"):   # the signature's check
        loaded.predict(frame.drop(columns="durations"))
    bad = frame.copy()
    bad.at[0, "machines"] = [[0, 0, 1, 2]] * 5
    with pytest.raises(Exception, match="row 0: machines must be"):
        loaded.predict(bad)


def test_models_pt_holds_every_arm_and_seed_and_loads_back(tmp_path):
    """models.pt: every arm's network of every seed (L2D's too), byte-deterministic, loaded back
    to the same parameters."""
    import torch

    seeds = [1000, 1001]
    nets = {arm: train_arm(arm, seeds, **KW)[0] for arm in ("single", "multi", "blind")}
    nets["l2d"] = train_l2d(seeds, updates=2, episodes=2, n_jobs=4, n_machines=3, kind="jssp", hidden=8,
                            hidden_head=4, lr=1e-3)[0]
    blob = models_bytes(nets, seeds)
    assert blob == models_bytes(nets, seeds)
    (tmp_path / "models.pt").write_bytes(blob)
    loaded, got_seeds = load_models(tmp_path / "models.pt")
    assert got_seeds == seeds and set(loaded) == set(nets)
    for arm in nets:
        for a, b in zip(nets[arm], loaded[arm]):
            assert type(a).__name__ == type(b).__name__
            assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
