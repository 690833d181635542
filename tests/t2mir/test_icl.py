"""The in-context data, the routing maths, the training loop and the pyfunc model on tiny cases."""
from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest
import torch

from stages.t2mir.env import oracle_return
from stages.t2mir.icl import (ICT, VARIANTS, balance_loss, batch_to_rows, context_columns, contrastive_loss, encode,
                              example_rows, feature_dim, make_pools, rows_to_batch, sample_batch, sample_from_pools, split_tasks,
                              top_k_weights)
from stages.t2mir.run import action_accuracy, oracle_returns, other_tasks, rollout_returns, train_model

TINY = dict(steps=60, tasks_per_batch=8, contexts_per_task=2, k=12, lr=3e-3, seed=0, d=16, heads=2, layers=1,
            n_token=4, n_task=4, top_k=2, hidden=8, balance_w=0.1, contrast_w=0.01, tau=0.1)


def test_split_is_disjoint_and_covers_the_grid():
    tr, te = split_tasks(5, 0.2, np.random.default_rng(0))
    assert len(te) == 5 and len(tr) == 20
    assert not {tuple(g) for g in tr} & {tuple(g) for g in te}
    assert len({tuple(g) for g in np.concatenate([tr, te])}) == 25


def test_rewards_mark_the_goal_and_tokens_have_the_right_shape():
    goals = np.array([[1, 2], [0, 0]])
    b = sample_batch(goals, 4, 30, np.random.default_rng(0))
    assert ((b["s2"] == goals[:, None]).all(-1) == (b["r"] > 0)).all()
    assert encode(b, 4).shape == (2, 31, feature_dim(4))


def test_pools_contexts_come_from_the_named_task_and_labels_are_optimal():
    goals = np.array([[0, 0], [3, 3], [1, 2]])
    pools = make_pools(goals, 4, 50, np.random.default_rng(0))
    ti = np.array([0, 1, 2, 2])
    b = sample_from_pools(pools, ti, goals, 4, 20, np.random.default_rng(1))
    assert ((b["s2"] == goals[ti][:, None]).all(-1) == (b["r"] > 0)).all()     # rewards of the task's own goal
    d = goals[ti] - b["q"]                                                       # by hand: x gap first
    want = np.where(d[:, 0] > 0, 0, np.where(d[:, 0] < 0, 1, np.where(d[:, 1] > 0, 2, np.where(d[:, 1] < 0, 3, 4))))
    assert (b["y"] == want).all()
    other = other_tasks(np.repeat(np.arange(3), 50), 3, np.random.default_rng(2))
    assert (other != np.repeat(np.arange(3), 50)).all() and set(other) == {0, 1, 2}
    with pytest.raises(ValueError, match="at least 2 tasks"):
        other_tasks(np.array([0]), 1, np.random.default_rng(0))


def test_rows_round_trip():
    goals = np.array([[1, 1], [2, 0]])
    pools = make_pools(goals, 3, 10, np.random.default_rng(0))
    b = sample_from_pools(pools, np.array([0, 1]), goals, 3, 5, np.random.default_rng(0))
    rows = batch_to_rows(b)
    assert rows.shape == (2, len(context_columns(5)))
    back = rows_to_batch(rows, 5)
    for key in ("s", "a", "r", "s2", "q"):
        assert np.array_equal(back[key], b[key])


def test_top_k_balance_and_contrastive_by_hand():
    w = top_k_weights(torch.tensor([[1.0, 3.0, 2.0]]), 2)
    assert torch.allclose(w, torch.tensor([[0.0, np.e / (np.e + 1), 1 / (np.e + 1)]]), atol=1e-6)
    p = torch.full((8, 4), 0.25)
    wu = torch.eye(4).repeat(2, 1)
    assert balance_loss(p, wu).item() == pytest.approx(1.0)        # uniform routing: 1
    z = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    ids = torch.tensor([0, 0, 1, 1])
    assert contrastive_loss(z, ids, 0.05).item() < 1e-3               # tasks separated: ~0
    assert contrastive_loss(z, torch.tensor([0, 1, 0, 1]), 0.05).item() > 5


@pytest.mark.parametrize("variant", VARIANTS)
def test_variants_run_and_dense_is_parameter_matched(variant):
    m = ICT(4, variant, d=16, heads=2, hidden=8)
    b = sample_batch(np.array([[1, 1], [2, 3]]), 4, 5, np.random.default_rng(0))
    assert m(encode(b, 4))[0].shape == (2, 5)
    n = sum(p.numel() for p in m.parameters())
    n_t2 = sum(p.numel() for p in ICT(4, "t2mir", d=16, heads=2, hidden=8).parameters())
    if variant == "dense":
        assert abs(n - n_t2) / n_t2 < 0.02


def test_bad_variant():
    with pytest.raises(ValueError, match="variant must be one of"):
        ICT(4, "sparse")


def test_oracle_returns_match_the_environment_closed_form():
    goals = np.array([[0, 0], [2, 1]])
    starts, ti = np.array([[0, 0], [0, 0], [2, 2]]), np.array([0, 1, 1])
    assert oracle_returns(goals, starts, ti, 10).tolist() == [oracle_return(s, goals[i], 10) for s, i in zip(starts, ti)]
    assert oracle_returns(goals, starts, ti, 10).tolist() == [10, 8, 10]


def test_training_learns_in_context_and_is_deterministic():
    tr, te = split_tasks(3, 0.2, np.random.default_rng(0))
    pools = make_pools(tr, 3, 40, np.random.default_rng(0))
    m, losses = train_model(3, "dense", tr, pools, **TINY)
    assert np.mean(losses[-10:]) < np.mean(losses[:10])
    m2, losses2 = train_model(3, "dense", tr, pools, **TINY)
    assert losses == losses2
    acc = [action_accuracy(x, 3, tr, pools, 20, 12, np.random.default_rng(1)) for x in (m, m2)]
    assert acc[0] == acc[1]
    r, ti, starts = rollout_returns(m, 3, tr, pools, 2, 12, 6, np.random.default_rng(2))
    assert r.shape == (2 * len(tr),) and (r <= oracle_returns(tr, starts, ti, 6)).all()


def test_pyfunc_predicts_the_models_greedy_action_and_names_missing_columns(tmp_path):
    import io
    import json

    from stages.t2mir.pyfunc import InContextPolicy

    model = ICT(4, "t2mir", d=16, heads=2, layers=1, n_token=4, n_task=4, top_k=2, hidden=8)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    (tmp_path / "w.pt").write_bytes(buf.getvalue())
    (tmp_path / "c.json").write_text(json.dumps({"size": 4, "k": 6, "variant": "t2mir", "d": 16, "heads": 2,
                                                 "layers": 1, "n_token": 4, "n_task": 4, "top_k": 2, "hidden": 8}))
    pol = InContextPolicy()
    pol.load_context(types.SimpleNamespace(artifacts={"weights": str(tmp_path / "w.pt"),
                                                      "config": str(tmp_path / "c.json")}))
    goals = np.array([[0, 3], [2, 2]])
    b = sample_from_pools(make_pools(goals, 4, 20, np.random.default_rng(0)), np.array([0, 1, 1]), goals, 4, 6,
                          np.random.default_rng(1))
    df = pd.DataFrame(batch_to_rows(b), columns=context_columns(6))
    model.eval()
    with torch.no_grad():
        want = model(encode(b, 4))[0].argmax(-1).tolist()
    assert pol.predict(None, df) == want
    with pytest.raises(ValueError, match="missing, first 'q_x'"):
        pol.predict(None, df.drop(columns=["q_x"]))


def test_the_input_example_is_one_context_of_each_first_held_out_task():
    goals = np.array([[0, 3], [2, 2], [1, 1], [3, 0]])
    pools = make_pools(goals, 4, 20, np.random.default_rng(0))
    tasks = {"size": 4, "test": (goals, pools)}
    ex = example_rows(tasks, 5, 0)
    assert list(ex.columns) == context_columns(5) and len(ex) == 3 and (ex.dtypes == np.float64).all()
    b = rows_to_batch(ex.to_numpy(), 5)
    for t in range(3):        # every transition comes from its own task's pool
        pool = {tuple(x) for x in np.concatenate([pools["s"][t], pools["a"][t][:, None], pools["s2"][t]], 1)}
        assert {tuple(x) for x in np.concatenate([b["s"][t], b["a"][t][:, None], b["s2"][t]], 1)} <= pool
    assert ex.equals(example_rows(tasks, 5, 0))


def test_context_column_names_are_unique_at_every_profiles_k(real_params):
    for profile, p in real_params["t2mir"].items():     # smoke k = 10 never met the clash default's 40 did
        k = p["train"]["k"]
        cols = context_columns(k)
        assert len(cols) == 6 * k + 2 and len(set(cols)) == len(cols), (profile, k)
