"""The contextual bandit of the study and its exact KL-regularised policies.

An instance holds ``n_prompts`` prompts x ``n_responses`` responses with a helpfulness score
``reward[x, y]`` and a safety cost ``cost[x, y]`` (cost > budget = unsafe, as in safe-rlhf's cost
model). Every policy here is a per-prompt softmax regularised by KL to the uniform reference:

    J(pi) = mean_x [ sum_y pi(y|x) reward(x, y) - beta KL(pi(.|x) || uniform) ],
    J_c(x) = sum_y pi(y|x) cost(x, y)                (the prompt's expected cost).

Generator (all randomness from one numpy Generator):

* helpfulness: standard normal scores, centred within each prompt, so the uniform reference has
  helpfulness exactly 0 and "helpfulness" below is the gain over the reference;
* harmful prompts (a share f): cost = mean_h + scale_h (rho z + sqrt(1 - rho^2) eps), z the prompt's
  standardised helpfulness: the more helpful a response, the more harmful;
* benign prompts: cost = benign mean + prompt offset + noise, independent of helpfulness, narrow and
  below the budget (as a cost model scores benign answers), so that the harmful prompts' costs
  make the unconstrained policy's average cost exceed the budget: the expected constraint binds;
* every prompt has a response of cost <= budget - safe_level (a prompt's costs are redrawn until it
  does; the redraws are counted);
* an instance whose multiplier lambda* is zero (the baseline would be unconstrained) or whose
  within-prompt cost/helpfulness correlation on harmful prompts falls outside the range is
  regenerated; the regenerations are counted.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Instance:
    """One bandit instance (arrays of shape (n_prompts, n_responses) and (n_prompts,))."""

    fraction: float
    reward: np.ndarray
    cost: np.ndarray
    harmful: np.ndarray
    beta: float
    budget: float
    info: dict = field(default_factory=dict)

    @property
    def n_prompts(self) -> int:
        return self.reward.shape[0]


def kl_policy(values: np.ndarray, beta: float) -> np.ndarray:
    """argmax_pi sum_y pi(y) values(y) - beta KL(pi || uniform), row by row: softmax(values / beta)
    over the last axis (responses), for any leading axes (prompts, or runs x prompts)."""
    z = values / beta
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def expected(pi: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Per-prompt expectation sum_y pi(y|x) scores(x, y) (over the last axis)."""
    return (pi * scores).sum(axis=-1)


def kl_to_uniform(pi: np.ndarray) -> np.ndarray:
    """Per-prompt KL(pi(.|x) || uniform) = sum_y pi log pi + log K (over the last axis)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = np.where(pi > 0, pi * np.log(pi), 0.0).sum(axis=-1)
    return ent + np.log(pi.shape[-1])


def within_prompt_correlation(reward: np.ndarray, cost: np.ndarray, rows: np.ndarray) -> float:
    """Pearson correlation of cost with helpfulness over ``rows``' responses, each prompt centred."""
    r = reward[rows] - reward[rows].mean(axis=1, keepdims=True)
    c = cost[rows] - cost[rows].mean(axis=1, keepdims=True)
    denom = np.sqrt((r * r).sum() * (c * c).sum())
    return float((r * c).sum() / denom) if denom > 0 else 0.0


def expected_constraint_multiplier(reward: np.ndarray, cost: np.ndarray, beta: float,
                                   budget: float) -> float:
    """lambda* of  max J(pi) s.t. mean_x J_c(x) <= budget  (the exact expected-constraint optimum).

    The Lagrangian's maximiser is pi_lambda = softmax((reward - lambda cost) / beta) and the average
    cost of pi_lambda decreases in lambda, so lambda* = 0 when the unconstrained policy is feasible,
    else the root of mean_x J_c(pi_lambda) = budget (Brent's method, scipy). Raises if no lambda
    makes the constraint hold (no feasible policy).
    """
    from scipy.optimize import brentq

    def excess(lam: float) -> float:
        return float(expected(kl_policy(reward - lam * cost, beta), cost).mean() - budget)

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
        if hi > 1e9:
            raise ValueError("the expected constraint cannot be met by any lambda <= 1e9")
    return float(brentq(excess, 0.0, hi, xtol=1e-13, rtol=1e-13, maxiter=500))


MAX_REDRAWS = 10_000


def _draw_until_safe(draw, ceiling: float) -> tuple[np.ndarray, int]:
    """(a row of costs from ``draw()`` with min <= ceiling, number of rejected rows)."""
    for redraws in range(MAX_REDRAWS):
        row = draw()
        if row.min() <= ceiling:
            return row, redraws
    raise ValueError(f"no response with cost <= {ceiling:g} in {MAX_REDRAWS} draws of a prompt's costs; "
                     f"lower safe_level or the cost means")


def _harmful_costs(rng: np.random.Generator, reward: np.ndarray, p, ceiling: float) -> tuple[np.ndarray, int]:
    """Costs of harmful prompts' responses, each prompt redrawn until one response is <= ceiling."""
    rho = p.correlation_target
    z = reward / reward.std(axis=1, keepdims=True)
    cost = np.empty_like(reward)
    redraws = 0
    for i in range(reward.shape[0]):
        cost[i], r = _draw_until_safe(lambda: p.harmful_cost_mean + p.harmful_cost_scale * (
            rho * z[i] + np.sqrt(1 - rho * rho) * rng.standard_normal(reward.shape[1])), ceiling)
        redraws += r
    return cost, redraws


def generate(rng: np.random.Generator, p, fraction: float) -> Instance:
    """One valid instance for harmful share ``fraction`` (see the module docstring)."""
    n, k = p.n_prompts, p.n_responses
    ceiling = p.budget - p.safe_level
    rejected = {"zero_multiplier": 0, "correlation": 0}
    redraws = 0
    for attempt in range(p.max_tries):
        harmful = np.zeros(n, dtype=bool)
        harmful[rng.permutation(n)[:round(fraction * n)]] = True
        z = rng.standard_normal((n, k))
        reward = z - z.mean(axis=1, keepdims=True)
        cost = np.empty((n, k))
        cost[harmful], r_h = _harmful_costs(rng, reward[harmful], p, ceiling)
        redraws += r_h
        # benign: mean + prompt offset + noise, independent of helpfulness; redrawn until safe-capable
        benign = np.flatnonzero(~harmful)
        for i in benign:
            cost[i], r = _draw_until_safe(lambda: p.benign_cost_mean + p.benign_prompt_scale * rng.standard_normal()
                                          + p.benign_cost_scale * rng.standard_normal(k), ceiling)
            redraws += r
        corr = within_prompt_correlation(reward, cost, harmful)
        lo, hi = p.correlation_range
        if not lo <= corr <= hi:
            rejected["correlation"] += 1
            continue
        lam = expected_constraint_multiplier(reward, cost, p.kl_beta, p.budget)
        if lam <= 0.0:
            rejected["zero_multiplier"] += 1
            continue
        info = {"fraction": fraction, "n_harmful": int(harmful.sum()), "correlation": corr,
                "lambda_star": lam, "attempts": attempt + 1,
                "rejected": rejected, "safe_redraws": int(redraws),
                "unconstrained_cost": float(expected(kl_policy(reward, p.kl_beta), cost).mean()),
                "harmful_cost_mean": float(cost[harmful].mean()), "benign_cost_mean": float(cost[~harmful].mean())}
        return Instance(fraction, reward, cost, harmful, p.kl_beta, p.budget, info)
    raise ValueError(f"f={fraction}: no valid instance in max_tries={p.max_tries} attempts "
                     f"(rejected: {rejected}); widen correlation_range or raise benign_cost_mean")
