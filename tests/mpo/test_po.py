"""mpo's maths against something known: gymnasium's Pendulum-v1, the DPO / cDPO / ORPO losses
written out by hand, and the preference construction on tiny cases."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from stages.mpo import po


def test_batch_pendulum_matches_gymnasium():
    gym = pytest.importorskip("gymnasium")
    env = gym.make("Pendulum-v1")
    obs, _ = env.reset(seed=3)
    batch = po.BatchPendulum(1, np.random.default_rng(0))
    batch.th[:], batch.thdot[:] = env.unwrapped.state
    rng = np.random.default_rng(1)
    for _ in range(50):
        np.testing.assert_allclose(batch.obs()[0], obs, atol=1e-5)
        u = rng.uniform(-2.5, 2.5)
        obs, r, *_ = env.step(np.array([u], dtype=np.float32))
        assert batch.step(np.array([u]))[0] == pytest.approx(float(r), abs=1e-4)


def test_expert_swings_up_and_random_does_not():
    rng = np.random.default_rng(0)
    expert, _ = po.rollout(po.expert_action, 16, rng)
    rand, _ = po.rollout(lambda o: rng.integers(0, po.N_ACTIONS, len(o)), 16, rng)
    assert expert.mean() > -300 and rand.mean() < -900


def _case():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(5, po.N_ACTIONS, generator=g)
    ref_logp = F.log_softmax(torch.randn(5, po.N_ACTIONS, generator=g), 1)
    w, lo = torch.tensor([0, 1, 2, 3, 4]), torch.tensor([5, 6, 7, 8, 0])
    return logits, ref_logp, w, lo


def test_dpo_and_cdpo_corners_are_the_closed_forms():
    logits, ref_logp, w, lo = _case()
    lp = F.log_softmax(logits, 1)
    i = torch.arange(5)
    h = 0.7 * ((lp[i, w] - ref_logp[i, w]) - (lp[i, lo] - ref_logp[i, lo]))
    assert po.family_loss(logits, ref_logp, w, lo, po.dpo(0.7)).item() == pytest.approx(
        (-F.logsigmoid(h)).mean().item(), rel=1e-5)
    cd = (-(0.8 * F.logsigmoid(h) + 0.2 * F.logsigmoid(-h))).mean().item()
    assert po.family_loss(logits, ref_logp, w, lo, po.cdpo(0.7, 0.2)).item() == pytest.approx(cd, rel=1e-5)


def test_orpo_corner_is_orpo_up_to_scale():
    logits, ref_logp, w, lo = _case()
    p = F.softmax(logits.double(), 1)
    i = torch.arange(5)
    odds = lambda a: torch.log(p[i, a] / (1 - p[i, a]))  # noqa: E731
    orpo = (-torch.log(p[i, w]) - 0.3 * F.logsigmoid(odds(w) - odds(lo))).mean().item()
    fam = po.family_loss(logits.double(), ref_logp.double(), w, lo, po.orpo(0.3)).item()
    assert 0.3 * fam == pytest.approx(orpo, rel=1e-6)


def test_tsallis_term_by_hand():
    logp, log1mp = torch.log(torch.tensor([0.25])), torch.log(torch.tensor([0.75]))
    # phi^-1(0.25) = log 0.25 - 2 log 0.75 + 3 (0.25^0.5 - 1) / 0.5
    want = np.log(0.25) - 2 * np.log(0.75) + 3 * (0.5 - 1) / 0.5
    assert po.mirror(logp, log1mp, 2.0, 3.0).item() == pytest.approx(want, rel=1e-6)


def test_search_origin_is_dpo_beta_one():
    assert po.theta_from_vector(np.zeros(len(po.FAMILY_KEYS))) == po.dpo(1.0)


def test_prefs_clean_nested_flips_and_mixed():
    rng = np.random.default_rng(0)
    s = np.stack([np.cos(rng.uniform(-3, 3, 400)), np.sin(rng.uniform(-3, 3, 400)), rng.normal(size=400)], 1)
    s[:, 1] = np.sqrt(1 - s[:, 0] ** 2) * np.sign(s[:, 1])
    probs = np.full((400, po.N_ACTIONS), 1 / po.N_ACTIONS)
    dist = np.abs(po.TORQUES[None, :] - po.expert_torque(s)[:, None])
    i = np.arange(400)
    clean = po.make_prefs(s, probs, 0.0, 0.0, np.random.default_rng(5))
    assert (clean.w != clean.lo).all() and (dist[i, clean.w] < dist[i, clean.lo]).all()
    a = po.make_prefs(s, probs, 0.2, 0.0, np.random.default_rng(5))
    b = po.make_prefs(s, probs, 0.3, 0.0, np.random.default_rng(5))
    assert set(np.flatnonzero(a.true_w == 0)) <= set(np.flatnonzero(b.true_w == 0))
    assert 0.2 < 1 - b.true_w.mean() < 0.4
    mixed = po.make_prefs(s, probs, 0.0, 1.0, np.random.default_rng(5))
    rank = dist.argsort(1).argsort(1)
    assert (rank[i, mixed.w] >= po.N_ACTIONS // 2).all()


def test_saved_policy_predicts_torques(tmp_path):
    import pandas as pd

    from stages.mpo.pyfunc import MpoPolicy

    pol = po.make_policy(4)
    po.save_policy_mlflow(tmp_path / "m", pol.state_dict(), 4, po.dpo(1.0), np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.5]]))
    art = tmp_path / "m" / "artifacts"
    model = MpoPolicy()
    model.load_context(type("C", (), {"artifacts": {"weights": str(art / "weights.pt"),
                                                    "config": str(art / "config.json")}})())
    out = model.predict(None, pd.DataFrame({"cos": [1.0, 0.0], "sin": [0.0, 1.0], "thdot": [0.0, 0.5]}))
    assert len(out) == 2 and all(t in po.TORQUES for t in out)
    with pytest.raises(ValueError, match="missing \\['thdot'\\]"):
        model.predict(None, pd.DataFrame({"cos": [1.0], "sin": [0.0]}))
