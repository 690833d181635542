"""The per-prompt-constrained optimum: the most helpful policy whose every prompt meets its budget.

Without regulariser it is the linear programme

    max_pi  mean_x sum_y pi(y|x) reward(x, y)
    s.t.    sum_y pi(y|x) cost(x, y) <= b   for every prompt x,
            sum_y pi(y|x) = 1,  pi >= 0,

an upper bound on the helpfulness of ANY policy that meets every prompt's constraint (the
KL-regularised RePO included). ``lp_highs`` solves it as one LP with HiGHS
(scipy.optimize.linprog(method="highs")): the reference answer the claims read.

``lp_pairs`` is our own solver of the same LP, used as a cross-check and in the benchmark: each
prompt's LP has two constraints, so a basic optimum mixes at most two responses; it is either the
most helpful response with cost <= b, or the mix of a feasible response i and an infeasible one j
that spends the budget exactly (weight (b - c_i) / (c_j - c_i) on j). Enumerating the K^2 pairs of
every prompt at once (numpy) gives the exact optimum.

``kl_per_prompt`` is the optimum with the same KL regulariser as the trained policies (context, not
an LP): per prompt, softmax((reward - mu_x cost) / beta) with mu_x >= 0 the smallest multiplier that
brings J_c(x) down to b (vectorised bisection on mu_x; the prompt's expected cost falls as mu_x grows).

``expected_at_safety`` is the control arm of the helpfulness must: the expected constraint tightened
as little as lets at most a given share of prompts violate their own budget (the fair strong
baseline: Safe RLHF's formulation made as safe per prompt as RePO must be, with its budget chosen
per instance by an oracle).
"""
from __future__ import annotations

import numpy as np

from .bandit import expected, kl_policy


def lp_highs(reward: np.ndarray, cost: np.ndarray, budget: float) -> tuple[np.ndarray, float, np.ndarray]:
    """(policy, mean helpfulness, per-prompt multipliers >= 0) of the LP above, solved by HiGHS."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix

    n, k = reward.shape
    rows = np.repeat(np.arange(n), k)
    cols = np.arange(n * k)
    a_ub = csr_matrix((cost.ravel(), (rows, cols)), shape=(n, n * k))
    a_eq = csr_matrix((np.ones(n * k), (rows, cols)), shape=(n, n * k))
    res = linprog(-reward.ravel() / n, A_ub=a_ub, b_ub=np.full(n, budget), A_eq=a_eq, b_eq=np.ones(n),
                  bounds=(0, None), method="highs")
    if res.status != 0:
        raise ValueError(f"HiGHS: per-prompt LP not solved ({res.message}); is every prompt feasible "
                         f"(a response with cost <= {budget})?")
    pi = np.clip(res.x.reshape(n, k), 0.0, None)
    pi /= pi.sum(axis=1, keepdims=True)
    return pi, float(-res.fun), -res.ineqlin.marginals * n


def lp_pairs(reward: np.ndarray, cost: np.ndarray, budget: float) -> tuple[np.ndarray, float]:
    """(policy, mean helpfulness) of the same LP by enumerating single responses and pairs."""
    n, k = reward.shape
    feasible = cost <= budget
    if not feasible.any(axis=1).all():
        raise ValueError(f"a prompt has no response with cost <= {budget}: the per-prompt LP is infeasible")
    # candidates (i, j, t): weight 1 - t on i (feasible), t on j; t = 0 are the single responses
    ci, cj = cost[:, :, None], cost[:, None, :]
    ri, rj = reward[:, :, None], reward[:, None, :]
    mix = feasible[:, :, None] & ~feasible[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(mix, (budget - ci) / (cj - ci), 0.0)
    value = np.where(mix | (feasible[:, :, None] & np.eye(k, dtype=bool)[None]), (1 - t) * ri + t * rj, -np.inf)
    best = value.reshape(n, -1).argmax(axis=1)
    i, j = np.divmod(best, k)
    tt = t.reshape(n, -1)[np.arange(n), best]
    pi = np.zeros((n, k))
    np.add.at(pi, (np.arange(n), i), 1 - tt)
    np.add.at(pi, (np.arange(n), j), tt)
    return pi, float(value.reshape(n, -1)[np.arange(n), best].mean())


def kl_per_prompt(reward: np.ndarray, cost: np.ndarray, beta: float, budget: float,
                  iters: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """(policy, multipliers mu_x) of  max E_pi reward - beta KL  s.t.  J_c(x) <= budget  per prompt."""
    if not (cost.min(axis=1) < budget).all():
        raise ValueError(f"a prompt has no response with cost < {budget}: no KL policy meets its budget")
    lo = np.zeros(reward.shape[0])
    hi = np.ones(reward.shape[0])

    def jc(mu: np.ndarray) -> np.ndarray:
        return expected(kl_policy(reward - mu[:, None] * cost, beta), cost)

    need = jc(lo) > budget
    while (need & (jc(hi) > budget)).any():
        hi = np.where(need & (jc(hi) > budget), hi * 2.0, hi)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        over = jc(mid) > budget
        lo = np.where(need & over, mid, lo)
        hi = np.where(need & ~over, mid, hi)
    mu = np.where(need, hi, 0.0)
    return kl_policy(reward - mu[:, None] * cost, beta), mu


def expected_at_safety(reward: np.ndarray, cost: np.ndarray, beta: float, budget: float,
                       share: float) -> tuple[np.ndarray, float]:
    """(policy, lambda) of the expected constraint tightened until at most ``share`` of the prompts
    violate J_c(x) <= budget.

    The expected-constraint optimum at any budget b' is pi_lambda = softmax((reward - lambda cost) /
    beta) with one lambda for all prompts; each prompt's expected cost falls as lambda grows, so
    prompt x meets its budget exactly when lambda >= mu_x, its own multiplier (:func:`kl_per_prompt`).
    With k = floor(share n) prompts allowed to violate, lambda is the (k+1)-th largest mu_x: the
    smallest multiplier, i.e. the loosest expected budget b' = mean_x J_c(pi_lambda), that is this
    safe per prompt, and so the largest regularised objective an expected-constraint policy reaches
    at this safety. The budget is chosen per instance with the instance in hand (an oracle): the
    baseline gets every advantage.
    """
    if not 0.0 <= share < 1.0:
        raise ValueError(f"share of prompts allowed to violate must be in [0, 1), got {share}")
    _, mu = kl_per_prompt(reward, cost, beta, budget)
    k = int(np.floor(share * mu.size + 1e-9))
    lam = float(np.sort(mu)[::-1][k])
    return kl_policy(reward - lam * cost, beta), lam
