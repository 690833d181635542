"""dima's world models and planner: parameter counts against torch, the normaliser's round trip,
the rollout error of an exact model (zero), the planner on a model with a known best action,
training determinism and bad inputs."""
from __future__ import annotations

import numpy as np
import pytest

from stages.dima.env import collect
from stages.dima.plan import ExactDynamics, cem_plan
from stages.dima.wm import (Normaliser, WorldModel, build, in_dims, mlp_params, nest, rollout_mse, sigmas, train,
                            width_for)


@pytest.mark.parametrize("kind", ["joint", "seq", "joint_chain"])
def test_param_count_matches_torch(kind):
    n, d = 3, 18
    net = build(kind, n, d, hidden=17, layers=2)
    assert sum(p.numel() for p in net.parameters()) == mlp_params(in_dims(n, d)[kind], d + 1, 17, 2)


def test_matched_widths_are_close():
    n, d = 2, 12
    counts = [mlp_params(in_dims(n, d)[k], d + 1, width_for(10_000, in_dims(n, d)[k], d + 1, 2), 2)
              for k in ("joint", "seq", "joint_chain")]
    assert max(counts) / min(counts) < 1.02


def test_sigmas_fall_linearly():
    assert np.allclose(sigmas(4, 2.0), [2.0, 1.5, 1.0, 0.5])


def test_normaliser_round_trip():
    rng = np.random.default_rng(0)
    s, s2, r = rng.normal(size=(50, 6)), rng.normal(size=(50, 6)), rng.normal(size=50)
    norm = Normaliser(s, s2, r)
    back_s2, back_r = norm.decode(s, norm.target(s, s2, r))
    assert np.allclose(back_s2, s2) and np.allclose(back_r, r)
    again = Normaliser.from_dict(norm.to_dict())
    assert np.allclose(again.decode(s, norm.target(s, s2, r))[0], s2)


def test_rollout_error_of_an_exact_model_is_zero():
    """The hand-derived N=1 physics (tests/dima/test_env.py) as a model: zero error at every horizon."""
    data = collect(1, 12, 3, seed=0, eps=1.0)
    assert np.allclose(rollout_mse(ExactDynamics(1), data, 10), 0, atol=1e-20)
    with pytest.raises(ValueError, match="no held-out window"):
        rollout_mse(ExactDynamics(1), data, 13)


class BestIsTwo:
    """Reward 1 when agent 0 plays action 2, else 0: the planner must return 2."""

    def imagine(self, s0, actions):
        return np.repeat(np.asarray(s0)[:, None], actions.shape[1], 1), (actions[..., 0] == 2).astype(float)


def test_planner_finds_the_known_best_action():
    a = cem_plan(BestIsTwo(), np.zeros(6), 1, horizon=3, candidates=40, elites=5, iterations=2,
                 rng=np.random.default_rng(0))
    assert a.tolist() == [2]
    with pytest.raises(ValueError, match="elites must be in 1..candidates"):
        cem_plan(BestIsTwo(), np.zeros(6), 1, 3, 4, 5, 1, np.random.default_rng(0))


@pytest.fixture(scope="module")
def small_data():
    return collect(2, 10, 4, seed=0, eps=0.5)


@pytest.mark.parametrize("kind,mode", [("joint", "denoise"), ("seq", "denoise"), ("seq", "chain"), ("joint_chain", "denoise")])
def test_training_is_deterministic_and_learns(small_data, kind, mode):
    m1, l1 = train(kind, small_data, 2, 800, 2, 40, 32, 3e-3, 1.0, seed=0, seq_training=mode)
    m2, l2 = train(kind, small_data, 2, 800, 2, 40, 32, 3e-3, 1.0, seed=0, seq_training=mode)
    assert l1 == l2 and np.mean(l1[-10:]) < np.mean(l1[:10])
    s2, r = m1.predict(small_data["s"][:5], small_data["a"][:5])
    assert s2.shape == (5, 12) and r.shape == (5,)
    m3 = WorldModel(kind, 2, 12, m1.hidden, 2, 1.0, m1.norm)
    m3.load_state_bytes(m1.state_bytes())
    assert np.array_equal(m3.predict(small_data["s"][:5], small_data["a"][:5])[0], s2)


def test_one_agent_chain_sees_what_the_joint_model_sees(small_data):
    """With N=1 the chain has one step, conditioned on the one action: the same information."""
    assert in_dims(1, 6)["seq"] - in_dims(1, 6)["joint"] == (6 + 1) + 1 + 1      # x, agent id, sigma


def test_bad_inputs(small_data):
    with pytest.raises(ValueError, match="kind must be one of"):
        build("gru", 2, 12, 8, 1)
    with pytest.raises(ValueError, match="seq_training must be one of"):
        train("seq", small_data, 2, 500, 1, 5, 8, 1e-3, 1.0, 0, seq_training="ddpm")
    with pytest.raises(ValueError, match=r"actions must have shape \(40, 3\)"):
        train("joint", small_data, 3, 500, 1, 5, 8, 1e-3, 1.0, 0)
    with pytest.raises(ValueError, match="collides with a value"):
        nest({"a": 1, "a.b": 2})


def test_nest():
    assert nest({"a.b": 1, "a.c.d": 2, "e": 3}) == {"a": {"b": 1, "c": {"d": 2}}, "e": 3}
