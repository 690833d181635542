"""Policy gradients (exact against finite differences, sampled against exact), the multiplier steps,
and where training ends: the baseline at the exact expected-constraint optimum, RePO inside every
prompt's budget near the per-prompt KL optimum at budget - margin."""
from __future__ import annotations

import numpy as np
import pytest

from stages.repo_safety.bandit import expected, generate, kl_policy, kl_to_uniform
from stages.repo_safety.optimum import kl_per_prompt
from stages.repo_safety.policy import (constraint_signal, cost_weights, dual_step, evaluate_policy,
                                       exact_gradient, sample_responses, sampled_gradient, softmax, train,
                                       train_batch)

from .conftest import small_params


def objective(theta, reward, cost, w, beta):
    pi = softmax(theta)
    return float((expected(pi, reward - w[:, None] * cost) - beta * kl_to_uniform(pi)).sum())


def test_exact_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    theta = rng.standard_normal((3, 4))
    reward, cost = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    w, beta = np.array([0.0, 0.7, 2.0]), 0.3
    g = exact_gradient(softmax(theta), reward, cost, w, beta)
    h = 1e-6
    for i in range(3):
        for j in range(4):
            e = np.zeros_like(theta)
            e[i, j] = h
            fd = (objective(theta + e, reward, cost, w, beta) - objective(theta - e, reward, cost, w, beta)) / (2 * h)
            assert g[i, j] == pytest.approx(fd, abs=1e-7)


def test_sample_responses_follow_the_policy():
    pi = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    ys = sample_responses(pi, 20000, np.random.default_rng(1))
    for x in range(2):
        freq = np.bincount(ys[x], minlength=3) / ys.shape[1]
        np.testing.assert_allclose(freq, pi[x], atol=0.015)
    assert (ys[1] != 2).all()


@pytest.mark.parametrize("method", ["expected", "rectified"])
def test_sampled_gradient_is_unbiased_when_the_weights_are_fixed(method):
    """Averaged over many draws, REINFORCE with a leave-one-out baseline gives the exact gradient
    (expected: the weight is lambda on every prompt, whatever the samples; rectified: prompts far from
    the boundary, so the sampled indicator equals the exact one)."""
    rng = np.random.default_rng(2)
    theta = rng.standard_normal((2, 4)) * 0.5
    pi = softmax(theta)
    reward = rng.standard_normal((2, 4))
    cost = np.array([[2.0, 2.5, 3.0, 2.2], [-2.0, -1.5, -3.0, -2.5]])   # prompt 0 violates, 1 is safe
    lam, beta = 0.8, 0.2
    exact = exact_gradient(pi, reward, cost, cost_weights(method, lam, expected(pi, cost), 0.0, 0.05), beta)
    est = np.mean([sampled_gradient(pi, reward, cost, beta, method, lam, 0.0, 0.05, 8, rng)[0]
                   for _ in range(20000)], axis=0)
    np.testing.assert_allclose(est, exact, atol=0.01)


def test_rectified_weights_and_signal():
    jc = np.array([-0.2, -0.06, -0.04, 0.3])
    np.testing.assert_array_equal(cost_weights("rectified", 2.0, jc, 0.0, 0.05), [0, 0, 2, 2])
    np.testing.assert_array_equal(cost_weights("expected", 2.0, jc, 0.0, 0.05), [2, 2, 2, 2])
    assert constraint_signal("rectified", jc, 0.0, 0.05) == pytest.approx((0.01 + 0.35) / 4)
    assert constraint_signal("expected", jc, 0.0, 0.0) == pytest.approx(jc.mean())
    assert constraint_signal("expected", jc, 0.0, 0.05) == pytest.approx(jc.mean() + 0.05)   # baseline + margin
    # one multiplier and budget per run: a batch of two runs
    jc2 = np.stack([jc, jc + 0.1])
    np.testing.assert_array_equal(cost_weights("rectified", np.array([2.0, 1.0]), jc2, np.array([0.0, 0.1]), 0.05),
                                  [[0, 0, 2, 2], [0, 0, 1, 1]])
    np.testing.assert_allclose(constraint_signal("expected", jc2, np.array([0.0, 0.1]), 0.0), [jc.mean(), jc.mean()])


def test_dual_steps_per_run():
    np.testing.assert_allclose(dual_step(np.array([1.0, 50.0]), np.array([0.5, 10.0]), "log", 0.1, 100.0),
                               [np.exp(0.05), 100.0])
    np.testing.assert_allclose(dual_step(np.array([1.0, 0.5]), np.array([0.5, -1.0]), "additive", 2.0, 100.0),
                               [2.0, 0.0])


def test_dual_steps():
    assert dual_step(1.0, 0.5, "log", 0.1, 100.0) == pytest.approx(np.exp(0.05))   # safe-rlhf: SGD on log lambda
    assert dual_step(1.0, -0.5, "log", 0.1, 100.0) == pytest.approx(np.exp(-0.05))
    assert dual_step(50.0, 10.0, "log", 0.1, 100.0) == 100.0                        # lambda_max
    assert dual_step(1.0, 0.5, "additive", 2.0, 100.0) == pytest.approx(2.0)
    assert dual_step(0.5, -1.0, "additive", 2.0, 100.0) == 0.0                        # projected on lambda >= 0


def test_bad_method_is_refused():
    z = np.zeros((2, 2))
    with pytest.raises(ValueError, match="method must be"):
        train(z, z, 0.1, 0.0, "average", "exact", 1, 0.1, "log", 1.0, 0.1, 10.0, 0.0, 2, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="lambda_update"):
        train(z, z, 0.1, 0.0, "expected", "exact", 1, 0.1, "sgd", 1.0, 0.1, 10.0, 0.0, 2, 1, np.random.default_rng(0))


@pytest.fixture(scope="module")
def small_instance():
    return generate(np.random.default_rng(5), small_params(), 0.2)


def test_baseline_converges_to_the_expected_constraint_optimum(small_instance):
    inst = small_instance
    tr = train(inst.reward, inst.cost, inst.beta, inst.budget, "expected", "exact", 3000, 0.05, "log", 1.0, 0.1,
               1000.0, 0.0, 8, 100, np.random.default_rng(0))
    lam_star = inst.info["lambda_star"]
    assert tr.lam == pytest.approx(lam_star, rel=1e-3)
    np.testing.assert_allclose(tr.pi, kl_policy(inst.reward - lam_star * inst.cost, inst.beta), atol=1e-3)
    ev = evaluate_policy(tr.pi, inst.reward, inst.cost, inst.budget, inst.beta)
    assert abs(ev["avg_cost"] - inst.budget) < 1e-4
    assert ev["violating_fraction"] > 0.05          # safety compensation on this instance too


def test_repo_meets_every_prompt_and_ends_near_the_margin_optimum(small_instance):
    inst = small_instance
    margin = 0.05
    tr = train(inst.reward, inst.cost, inst.beta, inst.budget, "rectified", "exact", 4000, 0.05, "additive", 1.0,
               1.0, 1000.0, margin, 8, 100, np.random.default_rng(0))
    jc = expected(tr.pi, inst.cost)
    assert (jc <= inst.budget).all()
    pi_m, mu = kl_per_prompt(inst.reward, inst.cost, inst.beta, inst.budget - margin)
    assert tr.lam > mu.max()             # exact penalty: lambda above every per-prompt multiplier
    h_repo, h_m = expected(tr.pi, inst.reward).mean(), expected(pi_m, inst.reward).mean()
    assert abs(h_repo - h_m) < 0.02


@pytest.mark.parametrize("method,mode", [("expected", "exact"), ("rectified", "exact"), ("expected", "sampled"),
                                         ("rectified", "sampled")])
def test_a_run_in_a_batch_is_the_run_alone(method, mode):
    """The seed dimension: each run of a batch (its own instance, multiplier and generator) ends with
    the policy, multiplier and curve it gets alone, bit for bit, whatever else shares the batch."""
    p = small_params()
    insts = [generate(np.random.default_rng([s, 3]), p, 0.2) for s in (21, 22, 23)]
    args = (0.1, 0.0, method, mode, 60, 0.05, "log" if method == "expected" else "additive", 1.0, 0.5, 1000.0,
            0.05, 4, 20)
    batch = train_batch(np.stack([i.reward for i in insts]), np.stack([i.cost for i in insts]), *args,
                        [np.random.default_rng([s, 9]) for s in (21, 22, 23)])
    pair = train_batch(np.stack([i.reward for i in insts[1:]]), np.stack([i.cost for i in insts[1:]]), *args,
                       [np.random.default_rng([s, 9]) for s in (22, 23)])
    for j, inst in enumerate(insts):
        alone = train(inst.reward, inst.cost, *args, np.random.default_rng([(21, 22, 23)[j], 9]))
        assert np.array_equal(batch[j].pi, alone.pi) and batch[j].lam == alone.lam and batch[j].curve == alone.curve
        if j:
            assert np.array_equal(pair[j - 1].pi, alone.pi) and pair[j - 1].lam == alone.lam
    assert not np.array_equal(batch[0].pi, batch[1].pi)


def test_a_batch_needs_one_generator_per_run():
    z = np.zeros((2, 3, 2))
    with pytest.raises(ValueError, match="one generator per run"):
        train_batch(z, z, 0.1, 0.0, "expected", "exact", 1, 0.1, "log", 1.0, 0.1, 10.0, 0.0, 2, 1,
                    [np.random.default_rng(0)])


def test_baseline_with_margin_meets_the_tightened_expected_constraint(small_instance):
    """The safety must's control: the expected constraint at budget - margin, reached on average;
    the prompts above their own budget remain."""
    inst = small_instance
    margin = 0.05
    tr = train(inst.reward, inst.cost, inst.beta, inst.budget, "expected", "exact", 3000, 0.05, "log", 1.0, 0.1,
               1000.0, margin, 8, 100, np.random.default_rng(0))
    ev = evaluate_policy(tr.pi, inst.reward, inst.cost, inst.budget, inst.beta)
    assert ev["avg_cost"] == pytest.approx(inst.budget - margin, abs=1e-4)
    assert tr.curve["avg_cost"][-1] == ev["avg_cost"]
    assert ev["violating_fraction"] > 0.05
