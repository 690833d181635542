"""dima on the claims contract v2: early stopping by one rule for every model, and each verdict
seed's figures depending on that seed alone."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest

from stages.common.runtime.params import load_study
from stages.dima.env import collect
from stages.dima.params import PARAMS
from stages.dima.paths import seed_key
from stages.dima.prepare import collect_seed
from stages.dima.pyfunc_io import load_models
from stages.dima.train import train_seed
from stages.dima.wm import train, val_loss


class Npz:
    def __init__(self, d: dict):
        self._d, self.files = d, list(d)

    def __getitem__(self, k):
        return self._d[k]


@pytest.fixture(scope="module")
def data():
    return collect(2, 10, 6, seed=3, eps=0.5), collect(2, 10, 3, seed=4, eps=0.5)


@pytest.mark.parametrize("kind", ["joint", "seq", "joint_chain"])
def test_early_stopping_keeps_the_best_checked_weights(data, kind):
    tr, val = data
    info: dict = {}
    model, losses = train(kind, tr, 2, 800, 2, 60, 32, 3e-3, 1.0, seed=0, seq_training="denoise", val=val,
                          eval_every=10, info=info)
    assert len(losses) == 60 and info["steps_run"] == 60 and info["best_step"] % 10 == 0
    assert val_loss(model, val) == pytest.approx(info["val_best"], rel=1e-6)
    # the kept weights are no worse on the validation episodes than the last weights
    last, _ = train(kind, tr, 2, 800, 2, 60, 32, 3e-3, 1.0, seed=0, seq_training="denoise")
    assert val_loss(model, val) <= val_loss(last, val) + 1e-7


def test_patience_stops_training(data):
    """With a learning rate too small to move the loss, the first check stays the best: training
    stops after ``patience`` more checks."""
    tr, val = data
    info: dict = {}
    _, losses = train("joint", tr, 2, 800, 2, 1000, 32, 1e-12, 1.0, seed=0, val=val, eval_every=5, patience=3, info=info)
    assert len(losses) == 20 and info["best_step"] == 5


def test_a_seed_does_not_depend_on_the_other_seeds():
    """Seed 1's data and models are the same whether seeds [0, 1] or [1] ran."""
    p = load_study("dima", PARAMS, profile="smoke")[1]
    tp = p.train.model_copy(update={"steps": 30, "eval_every": 10})
    both, alone = {}, {}
    for seed in (0, 1):
        a, _ = collect_seed(p.prepare, seed)
        both.update({seed_key(seed, k): v for k, v in a.items()})
    a1, _ = collect_seed(p.prepare, 1)
    alone.update({seed_key(1, k): v for k, v in a1.items()})
    for k, v in alone.items():
        assert np.array_equal(both[k], v)
    s_both, _, m_both = train_seed(Npz(both), 1, tp, p.prepare)
    s_alone, _, m_alone = train_seed(Npz(alone), 1, tp, p.prepare)
    assert m_both == m_alone
    for key in s_both:
        for w in s_both[key]:
            assert np.array_equal(s_both[key][w].numpy(), s_alone[key][w].numpy())
    # different seeds draw different data
    assert not np.array_equal(both[seed_key(0, "main_train_s")], both[seed_key(1, "main_train_s")][: len(both[seed_key(0, "main_train_s")])])


def test_load_models_by_seed(tmp_path, data):
    import torch

    tr, _ = data
    m0, _ = train("joint", tr, 2, 500, 1, 5, 8, 1e-3, 1.0, seed=0)
    m1, _ = train("joint", tr, 2, 500, 1, 5, 8, 1e-3, 1.0, seed=1)
    cfg = {k: {"kind": "joint", "n": 2, "d": 12, "hidden": m.hidden, "layers": 1, "sigma_max": 1.0,
               "norm": m.norm.to_dict()} for k, m in (("0", m0), ("1", m1))}
    buf = io.BytesIO()
    torch.save({"s0/main.joint": m0.net.state_dict(), "s1/main.joint": m1.net.state_dict()}, buf)
    (tmp_path / "w.pt").write_bytes(buf.getvalue())
    (tmp_path / "c.json").write_text(json.dumps({k: {"main.joint": c} for k, c in cfg.items()}))
    s, a = tr["s"][:4], tr["a"][:4]
    got1 = load_models(tmp_path / "w.pt", tmp_path / "c.json", seed=1)["main.joint"].predict(s, a)[0]
    got0 = load_models(tmp_path / "w.pt", tmp_path / "c.json")["main.joint"].predict(s, a)[0]
    assert np.allclose(got1, m1.predict(s, a)[0]) and np.allclose(got0, m0.predict(s, a)[0])
    assert not np.allclose(got0, got1)
    with pytest.raises(ValueError, match="no seed 7"):
        load_models(tmp_path / "w.pt", tmp_path / "c.json", seed=7)


def test_the_ledger_finds_every_claims_figures_per_seed(tmp_path):
    """Every claim's metric, baseline, control and context is in each seed's figures of the
    evaluate stage's function, and every claim not retired is judged on the two seeds."""
    import torch

    from stages.common.seeds import per_seed_metrics
    from stages.dima.evaluate import evaluate_seed
    from stages.dima.wm import nest
    from tests.helpers import assert_claims_read_every_seed

    seeds = [1000, 1001]
    p = load_study("dima", PARAMS, profile="smoke")[1]
    tp = p.train.model_copy(update={"steps": 20, "eval_every": 10})
    per = {}
    for seed in seeds:
        a, _ = collect_seed(p.prepare, seed)
        npz = Npz({seed_key(seed, k): v for k, v in a.items()})
        states, config, _ = train_seed(npz, seed, tp, p.prepare)
        buf = io.BytesIO()
        torch.save({f"s{seed}/{k}": v for k, v in states.items()}, buf)
        (tmp_path / "w.pt").write_bytes(buf.getvalue())
        (tmp_path / "c.json").write_text(json.dumps({str(seed): config}))
        models = load_models(tmp_path / "w.pt", tmp_path / "c.json", seed=seed)
        m, rows, returns, _ = evaluate_seed(npz, models, seed, p.evaluate, p.prepare)
        assert {r["seed"] for r in rows} == {seed} and set(returns) >= {"mpc_seq", "mpc_joint", "random"}
        per[seed] = nest(m)
    metrics = per_seed_metrics(per, horizon=p.evaluate.horizon)
    assert_claims_read_every_seed("dima", metrics, seeds)
