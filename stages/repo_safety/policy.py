"""Primal-dual training of per-prompt softmax policies: the expected-constraint baseline and RePO.

Both methods maximise  J(pi) = mean_x [ E_pi reward - beta KL(pi(.|x) || uniform) ]  with one
multiplier lambda; they differ only in the constraint that lambda prices:

* ``expected`` (Safe RLHF's PPO-Lagrangian, PKU-Alignment/safe-rlhf): one expected constraint
  mean_x J_c(x) <= b - m (the baseline runs with m = 0; the control arm "baseline with RePO's
  margin" with RePO's m). Policy step on  J - lambda mean_x J_c;  multiplier step on
  g = mean_x J_c(x) - b + m.
* ``rectified`` (RePO, pxyWaterMoon/RePO): a critical constraint on every prompt, turned into the
  rectified penalty  mean_x max(0, J_c(x) - b + m)  (m = the safety margin). Its gradient, the
  rectified policy gradient, applies the cost gradient only on prompts whose constraint (with
  margin) is violated: policy step on  J - lambda mean_x 1[J_c(x) - b + m > 0] J_c(x);  multiplier
  step on g = mean_x max(0, J_c(x) - b + m) >= 0, so lambda only grows while a prompt violates.

Multiplier steps: ``log`` is safe-rlhf's (PPOLagTrainer): lambda is stored as log lambda and moved
by SGD on the loss -g exp(log lambda), i.e. log lambda += lr g lambda, capped at lambda_max;
``additive`` is plain projected dual ascent on the min-max objective, lambda <- clip(lambda + lr g,
0, lambda_max). The baseline uses ``log`` (safe-rlhf); RePO uses ``additive``: its signal g is
never negative, so a multiplicative step grows lambda geometrically to the cap while any prompt
violates, and an exact penalty needs lambda only above the per-prompt multipliers. In both the
policy direction is divided by (1 + lambda), as safe-rlhf's actor loss does. safe-rlhf also adds
the KL penalty to the cost with the opposite sign, which makes its effective KL weight grow with
lambda; here the KL stays with the helpfulness term, so the baseline's fixed point is exactly the
expected-constraint optimum softmax((reward - lambda* cost) / beta) (checked in the tests) and
RePO's is the per-prompt KL optimum at budget b - m (compared in the metrics).

Gradients on the logits theta (pi = softmax(theta) per prompt) are either exact,
pi * (a - E_pi a) with a = reward - w cost - beta log pi, or sampled: REINFORCE with
``samples_per_prompt`` responses per prompt, a leave-one-out baseline, and the prompt's expected
cost in the rectified indicator and in g estimated by its sample mean. The logits move by Adam.

Runs are batched (:func:`train_batch`): arrays carry a leading run axis (a verdict seed x an
instance), each run with its own multiplier and its own random generator, so a run's figures do
not depend on which other runs share its batch (tests/repo_safety/test_seeds.py checks this bit for
bit). :func:`train` is one run.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Sequence

import numpy as np

from .bandit import expected, kl_to_uniform

Method = Literal["expected", "rectified"]
Mode = Literal["exact", "sampled"]


def softmax(theta: np.ndarray) -> np.ndarray:
    """Softmax over the last axis (responses), for any leading axes."""
    z = theta - theta.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _per_run(x) -> np.ndarray:
    """A scalar, or one value per run (shape jc.shape[:-1]), made to broadcast over prompts."""
    return np.asarray(x, dtype=float)[..., None]


def cost_weights(method: Method, lam, jc: np.ndarray, budget, margin: float) -> np.ndarray:
    """Per-prompt weight of the cost in the policy step: lambda (expected) or lambda 1[J_c(x) - b + m > 0]
    (RePO). ``lam`` and ``budget``: scalars, or one per run (``jc`` is (runs, prompts))."""
    if method == "expected":
        return np.broadcast_to(_per_run(lam), jc.shape).copy()
    return _per_run(lam) * (jc - _per_run(budget) + margin > 0).astype(float)


def constraint_signal(method: Method, jc: np.ndarray, budget, margin: float):
    """g of the multiplier step, per run: mean J_c - b + m (expected) or mean max(0, J_c - b + m) (RePO)."""
    if method == "expected":
        return jc.mean(axis=-1) - np.asarray(budget, dtype=float) + margin
    return np.maximum(jc - _per_run(budget) + margin, 0.0).mean(axis=-1)


def exact_gradient(pi: np.ndarray, reward: np.ndarray, cost: np.ndarray, w: np.ndarray,
                   beta: float) -> np.ndarray:
    """d/dtheta_x of  E_pi[reward - w_x cost] - beta KL(pi(.|x) || uniform), every prompt x (and run)."""
    with np.errstate(divide="ignore"):
        logp = np.log(pi)
    a = reward - w[..., None] * cost - beta * np.where(pi > 0, logp, 0.0)
    return pi * (a - (pi * a).sum(axis=-1, keepdims=True))


def sample_responses(pi: np.ndarray, n: int, rng) -> np.ndarray:
    """(prompts, n) responses drawn from pi(.|x) by inverse CDF; for a batch pi (runs, prompts, K),
    ``rng`` is one Generator per run and each run draws from its own."""
    if pi.ndim == 2:
        return sample_responses(pi[None], n, [rng])[0]
    cum = np.cumsum(pi, axis=-1)
    u = np.stack([g.random((pi.shape[1], n)) for g in rng]) * cum[..., -1:]
    return np.minimum((u[..., None] >= cum[..., None, :]).sum(axis=-1), pi.shape[-1] - 1)


def sampled_gradient(pi: np.ndarray, reward: np.ndarray, cost: np.ndarray, beta: float, method: Method,
                     lam, budget, margin: float, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """REINFORCE estimate of the policy step and the per-prompt cost estimates (sample means); for a
    batch (runs, prompts, K), ``lam``/``budget`` per run and one Generator per run in ``rng``."""
    if pi.ndim == 2:
        g, jc = sampled_gradient(pi[None], reward[None], cost[None], beta, method, lam, budget, margin, n, [rng])
        return g[0], jc[0]
    runs, n_prompts, k = pi.shape
    ys = sample_responses(pi, n, rng)
    r_s, c_s = np.take_along_axis(reward, ys, axis=-1), np.take_along_axis(cost, ys, axis=-1)
    jc_hat = c_s.mean(axis=-1)
    w = cost_weights(method, lam, jc_hat, budget, margin)
    a = r_s - w[..., None] * c_s - beta * np.log(np.take_along_axis(pi, ys, axis=-1))
    adv = a - (a.sum(axis=-1, keepdims=True) - a) / (n - 1)        # leave-one-out baseline
    # (1/n) sum_k adv_k (onehot(y_k) - pi); the pi term vanishes because sum_k adv_k = 0
    rows = np.arange(runs * n_prompts).reshape(runs, n_prompts, 1)
    flat = np.bincount((rows * k + ys).ravel(), weights=adv.ravel(), minlength=runs * n_prompts * k)
    return flat.reshape(runs, n_prompts, k) / n, jc_hat


class Adam:
    """Adam (Kingma & Ba) for gradient ascent on one array."""

    def __init__(self, shape: tuple[int, ...], lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m = np.zeros(shape)
        self.v = np.zeros(shape)
        self.t = 0

    def step(self, grad: np.ndarray) -> np.ndarray:
        self.t += 1
        self.m = self.b1 * self.m + (1 - self.b1) * grad
        self.v = self.b2 * self.v + (1 - self.b2) * grad * grad
        m_hat = self.m / (1 - self.b1 ** self.t)
        v_hat = self.v / (1 - self.b2 ** self.t)
        return self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


VIOLATION_TOL = 1e-9   # floating-point slack: an LP vertex spends the budget exactly


def violates(jc: np.ndarray, budget: float) -> np.ndarray:
    """Prompts whose expected cost exceeds the budget (beyond floating-point slack)."""
    return jc > budget + VIOLATION_TOL


def evaluate_policy(pi: np.ndarray, reward: np.ndarray, cost: np.ndarray, budget: float,
                    beta: float) -> dict:
    """Exact figures of a policy: helpfulness, average cost, share of prompts violating J_c(x) <= b."""
    jc = expected(pi, cost)
    return {"helpfulness": float(expected(pi, reward).mean()),
            "objective": float((expected(pi, reward) - beta * kl_to_uniform(pi)).mean()),
            "avg_cost": float(jc.mean()), "max_cost": float(jc.max()),
            "violating_fraction": float(violates(jc, budget).mean())}


@dataclass
class Trained:
    pi: np.ndarray
    lam: float
    curve: dict = field(default_factory=dict)


def dual_step(lam, g, update: Literal["log", "additive"], lr: float, lambda_max: float):
    """One multiplier step (see the module docstring); ``lam`` and ``g`` scalars or one per run."""
    if update == "log":
        return np.minimum(lam * np.exp(lr * g * lam), lambda_max)
    return np.minimum(np.maximum(lam + lr * g, 0.0), lambda_max)


def train_batch(reward: np.ndarray, cost: np.ndarray, beta: float, budget: float, method: Method, mode: Mode,
                steps: int, lr: float, lambda_update: Literal["log", "additive"], lambda_init: float,
                lambda_lr: float, lambda_max: float, margin: float, samples_per_prompt: int, log_every: int,
                rngs: Sequence[np.random.Generator], progress=None) -> list[Trained]:
    """Primal-dual training from the uniform policy (logits 0) of a batch of independent runs:
    ``reward``/``cost`` are (runs, prompts, responses), one Generator per run in ``rngs`` (sampled
    mode draws from it; exact mode draws nothing). ``margin`` tightens the constraint by m (both
    methods; the baseline passes 0). The training curves record the share of prompts violating
    J_c(x) <= ``budget`` (without the margin). See the module docstring."""
    if method not in ("expected", "rectified") or mode not in ("exact", "sampled"):
        raise ValueError(f"method must be 'expected' or 'rectified' and mode 'exact' or 'sampled', "
                         f"got {method!r}, {mode!r}")
    if lambda_update not in ("log", "additive"):
        raise ValueError(f"lambda_update must be 'log' or 'additive', got {lambda_update!r}")
    if reward.ndim != 3 or reward.shape != cost.shape or len(rngs) != reward.shape[0]:
        raise ValueError(f"a batch needs reward and cost of one shape (runs, prompts, responses) and one "
                         f"generator per run, got {reward.shape}, {cost.shape}, {len(rngs)} generators")
    runs = reward.shape[0]
    theta = np.zeros(reward.shape)
    opt = Adam(theta.shape, lr)
    lam = np.full(runs, float(lambda_init))
    keys = ("step", "lambda", "helpfulness", "avg_cost", "violating_fraction")
    curves: list[dict[str, list]] = [{k: [] for k in keys} for _ in range(runs)]
    for t in range(steps + 1):
        pi = softmax(theta)
        if t % log_every == 0 or t == steps:
            for b in range(runs):
                ev = evaluate_policy(pi[b], reward[b], cost[b], budget, beta)
                curves[b]["step"].append(t)
                curves[b]["lambda"].append(float(lam[b]))
                for key in keys[2:]:
                    curves[b][key].append(ev[key])
        if t == steps:
            break
        if mode == "exact":
            jc = expected(pi, cost)
            grad = exact_gradient(pi, reward, cost, cost_weights(method, lam, jc, budget, margin), beta)
        else:
            grad, jc = sampled_gradient(pi, reward, cost, beta, method, lam, budget, margin,
                                        samples_per_prompt, rngs)
        theta += opt.step(grad / (1.0 + lam)[:, None, None])
        lam = dual_step(lam, constraint_signal(method, jc, budget, margin), lambda_update, lambda_lr, lambda_max)
        if progress is not None:
            progress.update(runs)
    pi = softmax(theta)
    return [Trained(pi[b], float(lam[b]), curves[b]) for b in range(runs)]


def train(reward: np.ndarray, cost: np.ndarray, beta: float, budget: float, method: Method, mode: Mode,
          steps: int, lr: float, lambda_update: Literal["log", "additive"], lambda_init: float,
          lambda_lr: float, lambda_max: float, margin: float, samples_per_prompt: int, log_every: int,
          rng: np.random.Generator, progress=None) -> Trained:
    """One run of :func:`train_batch` (``reward``/``cost``: (prompts, responses))."""
    return train_batch(reward[None], cost[None], beta, budget, method, mode, steps, lr, lambda_update, lambda_init,
                       lambda_lr, lambda_max, margin, samples_per_prompt, log_every, [rng], progress)[0]
