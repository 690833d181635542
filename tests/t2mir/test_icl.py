"""The in-context data, the routing maths and the training loop on tiny cases."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.t2mir.icl import (ICT, VARIANTS, balance_loss, contrastive_loss, encode, feature_dim, sample_batch,
                              split_tasks, top_k_weights)
from stages.t2mir.run import action_accuracy, train_model


def test_split_is_disjoint_and_covers_the_grid():
    tr, te = split_tasks(5, 0.2, np.random.default_rng(0))
    assert len(te) == 5 and len(tr) == 20
    assert not {tuple(g) for g in tr} & {tuple(g) for g in te}


def test_rewards_mark_the_goal_and_tokens_have_the_right_shape():
    goals = np.array([[1, 2], [0, 0]])
    b = sample_batch(goals, 4, 30, np.random.default_rng(0))
    hit = b["r"] > 0
    assert (b["s2"][hit[0]][:, None] == goals[0]).all() if hit[0].any() else True
    assert ((b["s2"] == goals[:, None]).all(-1) == hit).all()
    assert encode(b, 4).shape == (2, 31, feature_dim(4))


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


def test_training_learns_in_context_on_a_tiny_grid():
    tr, te = split_tasks(3, 0.2, np.random.default_rng(0))
    cfg = dict(steps=60, tasks_per_batch=8, contexts_per_task=2, k=12, lr=3e-3, seed=0, d=16, heads=2, layers=1,
               n_token=4, n_task=4, top_k=2, hidden=8, balance_w=0.1, contrast_w=0.01, tau=0.1)
    m, losses = train_model(3, "dense", tr, **cfg)
    assert np.mean(losses[-10:]) < np.mean(losses[:10])
    m2, _ = train_model(3, "dense", tr, **cfg)
    acc = [action_accuracy(x, 3, tr, 20, 12, np.random.default_rng(1)) for x in (m, m2)]
    assert acc[0] == acc[1]                                            # deterministic
