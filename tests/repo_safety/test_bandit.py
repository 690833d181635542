"""The bandit generator and the exact expected-constraint optimum."""
from __future__ import annotations

import numpy as np
import pytest

from stages.repo_safety.bandit import (expected, expected_constraint_multiplier, generate, kl_policy,
                                       kl_to_uniform, within_prompt_correlation)


def test_kl_policy_maximises_the_regularised_objective():
    rng = np.random.default_rng(0)
    v = rng.standard_normal((1, 5))
    beta = 0.3
    best = kl_policy(v, beta)

    def obj(pi):
        return float((pi * v).sum() - beta * kl_to_uniform(pi)[0])

    for _ in range(200):
        other = rng.dirichlet(np.ones(5))[None]
        assert obj(other) <= obj(best) + 1e-12
    assert kl_to_uniform(np.full((1, 4), 0.25))[0] == pytest.approx(0.0, abs=1e-15)


def test_instance_is_valid(gen_params):
    inst = generate(np.random.default_rng(0), gen_params, 0.2)
    p = gen_params
    assert inst.reward.shape == inst.cost.shape == (p.n_prompts, p.n_responses)
    assert inst.harmful.sum() == round(0.2 * p.n_prompts)
    np.testing.assert_allclose(inst.reward.mean(axis=1), 0.0, atol=1e-12)      # uniform policy: gain 0
    assert (inst.cost.min(axis=1) <= p.budget - p.safe_level).all()          # a safe response everywhere
    lo, hi = p.correlation_range
    assert lo <= inst.info["correlation"] <= hi
    assert inst.info["correlation"] == pytest.approx(
        within_prompt_correlation(inst.reward, inst.cost, inst.harmful))
    assert inst.info["lambda_star"] > 0
    assert inst.info["unconstrained_cost"] > p.budget
    assert inst.info["attempts"] == 1 + sum(inst.info["rejected"].values())


def test_generation_is_deterministic(gen_params):
    a = generate(np.random.default_rng([7, 120]), gen_params, 0.12)
    b = generate(np.random.default_rng([7, 120]), gen_params, 0.12)
    np.testing.assert_array_equal(a.cost, b.cost)
    np.testing.assert_array_equal(a.harmful, b.harmful)


def test_multiplier_solves_the_expected_constraint(gen_params):
    inst = generate(np.random.default_rng(1), gen_params, 0.3)
    lam = expected_constraint_multiplier(inst.reward, inst.cost, inst.beta, inst.budget)
    pi = kl_policy(inst.reward - lam * inst.cost, inst.beta)
    assert expected(pi, inst.cost).mean() == pytest.approx(inst.budget, abs=1e-9)
    # KKT: no policy meeting the expected constraint has a larger regularised objective
    rng = np.random.default_rng(2)
    obj = (expected(pi, inst.reward) - inst.beta * kl_to_uniform(pi)).mean()
    for _ in range(50):
        q = kl_policy(inst.reward - rng.uniform(0, 3 * lam) * inst.cost + 0.05 * rng.standard_normal(inst.cost.shape),
                      inst.beta)
        if expected(q, inst.cost).mean() <= inst.budget:
            assert (expected(q, inst.reward) - inst.beta * kl_to_uniform(q)).mean() <= obj + 1e-9


def test_unconstrained_case_gives_zero_multiplier():
    reward = np.array([[1.0, 0.0]])
    cost = np.array([[-1.0, 1.0]])
    assert expected_constraint_multiplier(reward, cost, 0.1, 0.0) == 0.0


def test_zero_multiplier_instances_are_rejected_and_counted(gen_params):
    gen_params.benign_cost_mean = -1.0          # benign prompts compensate everything: lambda* = 0
    gen_params.max_tries = 3
    with pytest.raises(ValueError, match=r"no valid instance in max_tries=3.*'zero_multiplier': 3"):
        generate(np.random.default_rng(0), gen_params, 0.12)


def test_out_of_range_correlation_is_rejected(gen_params):
    gen_params.correlation_range = [0.95, 0.99]
    gen_params.max_tries = 2
    with pytest.raises(ValueError, match="'correlation': 2"):
        generate(np.random.default_rng(0), gen_params, 0.3)


def test_impossible_safe_level_is_reported(gen_params):
    gen_params.safe_level = 50.0
    with pytest.raises(ValueError, match="no response with cost <= -50"):
        generate(np.random.default_rng(0), gen_params, 0.2)
