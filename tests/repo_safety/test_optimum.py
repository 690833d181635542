"""The per-prompt-constrained optimum: HiGHS on a case solved by hand, our pair enumeration against
HiGHS, and the KL-regularised per-prompt optimum against scipy's root finder and its KKT conditions."""
from __future__ import annotations

import numpy as np
import pytest

from stages.repo_safety.bandit import expected, kl_policy
from stages.repo_safety.optimum import kl_per_prompt, lp_highs, lp_pairs


def hand_case():
    """Two prompts, three responses, budget 0.

    Prompt 0: rewards (1, 2, 4), costs (-1, 0.5, 1). The best feasible single response is 0 (reward 1);
    mixing 0 with 2: t = (0 - (-1)) / (1 - (-1)) = 1/2, reward 2.5; with 1: t = 1/1.5 = 2/3,
    reward 1/3 + 4/3 = 5/3. Optimum 2.5, pi = (1/2, 0, 1/2), multiplier (4 - 1) / (1 - (-1)) = 1.5.
    Prompt 1: rewards (3, 0, 1), costs (-0.2, 0.4, 0.1): the most helpful response is feasible:
    optimum 3, pi = (1, 0, 0), multiplier 0. Mean helpfulness (2.5 + 3) / 2 = 2.75.
    """
    reward = np.array([[1.0, 2.0, 4.0], [3.0, 0.0, 1.0]])
    cost = np.array([[-1.0, 0.5, 1.0], [-0.2, 0.4, 0.1]])
    return reward, cost


def test_highs_on_the_hand_case():
    reward, cost = hand_case()
    pi, value, mu = lp_highs(reward, cost, 0.0)
    assert value == pytest.approx(2.75, abs=1e-9)
    np.testing.assert_allclose(pi, [[0.5, 0.0, 0.5], [1.0, 0.0, 0.0]], atol=1e-9)
    np.testing.assert_allclose(mu, [1.5, 0.0], atol=1e-9)


def test_pairs_on_the_hand_case():
    reward, cost = hand_case()
    pi, value = lp_pairs(reward, cost, 0.0)
    assert value == pytest.approx(2.75, abs=1e-12)
    np.testing.assert_allclose(pi, [[0.5, 0.0, 0.5], [1.0, 0.0, 0.0]], atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_pairs_match_highs_on_random_instances(seed):
    rng = np.random.default_rng(seed)
    reward = rng.standard_normal((40, 7))
    cost = rng.standard_normal((40, 7)) + 0.3
    cost[np.arange(40), rng.integers(0, 7, 40)] = -0.5          # every prompt feasible
    budget = 0.1
    pi_h, v_h, _ = lp_highs(reward, cost, budget)
    pi_p, v_p = lp_pairs(reward, cost, budget)
    assert v_p == pytest.approx(v_h, abs=1e-9)
    for pi in (pi_h, pi_p):
        assert (expected(pi, cost) <= budget + 1e-9).all()
        np.testing.assert_allclose(pi.sum(axis=1), 1.0)
    np.testing.assert_allclose(expected(pi_p, reward), expected(pi_h, reward), atol=1e-9)


def test_infeasible_prompt_is_reported():
    reward, cost = hand_case()
    cost[1] = [0.5, 0.4, 0.3]
    with pytest.raises(ValueError, match="infeasible|not solved"):
        lp_pairs(reward, cost, 0.0)
    with pytest.raises(ValueError, match="not solved"):
        lp_highs(reward, cost, 0.0)


def test_kl_per_prompt_meets_kkt_and_matches_brent():
    from scipy.optimize import brentq

    rng = np.random.default_rng(3)
    reward = rng.standard_normal((30, 5))
    cost = rng.standard_normal((30, 5)) * 0.5
    cost[:, 0] = -1.0
    beta, budget = 0.2, 0.0
    pi, mu = kl_per_prompt(reward, cost, beta, budget)
    jc = expected(pi, cost)
    free = expected(kl_policy(reward, beta), cost) <= budget
    assert free.any() and (~free).any()
    assert (mu[free] == 0).all()
    np.testing.assert_allclose(jc[~free], budget, atol=1e-10)   # complementary slackness
    for x in np.flatnonzero(~free)[:5]:
        root = brentq(lambda m: float(expected(kl_policy(reward[x:x + 1] - m * cost[x:x + 1], beta),
                                                cost[x:x + 1])[0] - budget), 0.0, 1e3, xtol=1e-14)
        assert mu[x] == pytest.approx(root, rel=1e-8, abs=1e-10)


def test_kl_optimum_below_lp_optimum():
    """The KL-regularised optimum is a feasible policy of the LP, so it cannot be more helpful."""
    rng = np.random.default_rng(4)
    reward = rng.standard_normal((30, 5))
    cost = rng.standard_normal((30, 5)) * 0.5
    cost[:, 0] = -1.0
    pi, _ = kl_per_prompt(reward, cost, 0.1, 0.0)
    _, v_lp, _ = lp_highs(reward, cost, 0.0)
    assert expected(pi, reward).mean() <= v_lp + 1e-12


def test_expected_at_safety_is_the_loosest_expected_constraint_that_safe():
    """The tightened expected constraint (the helpfulness must's control): at most k = floor(share n)
    prompts violate, and any smaller multiplier (a looser expected budget) lets more violate; checked
    against a scan of lambda on a fine grid."""
    from stages.repo_safety.bandit import generate
    from stages.repo_safety.optimum import expected_at_safety
    from stages.repo_safety.policy import violates

    from .conftest import small_params

    inst = generate(np.random.default_rng(11), small_params(), 0.2)
    r, c, beta, b = inst.reward, inst.cost, inst.beta, inst.budget
    for share in (0.0, 0.05, 0.1):
        k = int(np.floor(share * r.shape[0] + 1e-9))
        pi, lam = expected_at_safety(r, c, beta, b, share)
        np.testing.assert_allclose(pi, kl_policy(r - lam * c, beta))
        assert violates(expected(pi, c), b).sum() <= k
        looser = kl_policy(r - lam * (1 - 1e-6) * c, beta)
        assert violates(expected(looser, c), b).sum() > k
        grid = np.linspace(0.0, lam * 1.5, 3001)
        ok = [g for g in grid if violates(expected(kl_policy(r - g * c, beta), c), b).sum() <= k]
        assert min(ok) == pytest.approx(lam, abs=lam * 1.5 / 3000 + 1e-12)
    with pytest.raises(ValueError, match=r"in \[0, 1\)"):
        expected_at_safety(r, c, beta, b, 1.0)
