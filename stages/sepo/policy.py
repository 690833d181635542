"""sepo's policy-gradient core (SEPO) and its baselines (best-of-N, the KL-optimal tilt, RWFT).

SEPO writes the gradient of E[R] through the model's concrete score s(x)_y = p(y)/p(x). With
sum_y p(y) = 1, log p(x) = -log sum_y s(x)_y, so grad log p(x) = -sum_y pi_y grad log s(x)_y with
pi_y = s(x)_y / sum_y' s(x)_y'. Over the Hamming-1 neighbours y of x (plus x itself, s = 1), this is a
local surrogate log-likelihood ell(x) = -logsumexp(0, log s(x)_y) whose gradient is SEPO's
estimator with pi normalised from the scores. The concrete score is the sampler's own: log s(x)_{l,v}
= log p(v | x with l masked) - log p(x_l | x with l masked). A PPO-style clipped ratio
exp(ell_theta - ell_old) and standardised (GRPO-style) advantages make the update.
"""
from __future__ import annotations

import numpy as np
import torch

from .dd import MASK, Denoiser


def group_advantages(r: np.ndarray, groups: int, per_group: bool) -> np.ndarray:
    """Standardised rewards: within each of ``groups`` equal groups (GRPO), or across the whole
    batch (the released code). A group with equal rewards gets advantage 0."""
    r = np.asarray(r, dtype=np.float64)
    if r.size % groups:
        raise ValueError(f"{r.size} rewards do not split into {groups} equal groups")
    g = r.reshape(groups, -1) if per_group else r.reshape(1, -1)
    sd = g.std(1, keepdims=True)
    adv = np.where(sd > 0, (g - g.mean(1, keepdims=True)) / np.where(sd > 0, sd, 1.0), 0.0)
    return adv.reshape(-1)


def ppo_clip_loss(ratio: torch.Tensor, adv: torch.Tensor, eps: float) -> torch.Tensor:
    """-mean(min(ratio A, clip(ratio, 1-eps, 1+eps) A)): the PPO/GRPO clipped surrogate, minimised."""
    return -torch.minimum(ratio * adv, ratio.clamp(1 - eps, 1 + eps) * adv).mean()


def log_concrete_score(model: Denoiser, x: torch.Tensor) -> torch.Tensor:
    """log s(x)_{l,v} [n, L, 4] of the sampler at clean ``x`` [n, L]: 0 at v = x_l."""
    n, length = x.shape
    z = x.unsqueeze(1).repeat(1, length, 1)                             # [n, L, L]: copy l has l masked
    eye = torch.eye(length, dtype=torch.bool).unsqueeze(0)
    z = torch.where(eye, torch.full_like(z, MASK), z)
    logp = model(z.reshape(n * length, length)).view(n, length, length, 4)
    logp_l = logp[:, torch.arange(length), torch.arange(length)]        # [n, L, 4]: position l in copy l
    return logp_l - logp_l.gather(-1, x.unsqueeze(-1))


def surrogate_loglik(model: Denoiser, x: torch.Tensor, include_self: bool = True) -> torch.Tensor:
    """ell(x) = -logsumexp(0, log s(x)_y over the 3L Hamming-1 neighbours y); without the 0 (x itself)
    when not ``include_self``, so that pi_y is normalised over the neighbours alone."""
    ls = log_concrete_score(model, x)
    ls = ls.masked_fill(torch.nn.functional.one_hot(x, 4).bool(), float("-inf")).flatten(1)
    if include_self:
        ls = torch.cat([torch.zeros(len(x), 1), ls], 1)
    return -torch.logsumexp(ls, 1)


def score_objective(model: Denoiser, x: torch.Tensor, adv: torch.Tensor, old: torch.Tensor, eps: float) -> torch.Tensor:
    """The released code's form of the SEPO loss, with the sampler's concrete score: S(x) =
    sum_y pi_y log s_theta(x)_y (pi_y from the current scores over the neighbours, no gradient through
    it), ratio rho = exp(ell_theta - ell_old), loss mean(max(rho A S, clip(rho) A S)). Its gradient
    at theta = old is A sum_y pi_y grad log s(x)_y = -A grad ell(x), SEPO's estimator."""
    ls = log_concrete_score(model, x)
    ls = ls.masked_fill(torch.nn.functional.one_hot(x, 4).bool(), float("-inf")).flatten(1)
    ell = -torch.logsumexp(ls, 1)
    pi = torch.softmax(ls, 1).detach()
    s = (pi * ls.masked_fill(torch.isinf(ls), 0.0)).sum(1)
    ratio = torch.exp(ell - old)
    return torch.maximum(ratio * adv * s, ratio.clamp(1 - eps, 1 + eps) * adv * s).mean()


def best_of_n(p: np.ndarray, r: np.ndarray, n: int) -> np.ndarray:
    """The exact output distribution of best-of-``n`` from ``p`` under reward ``r`` (ties broken at
    random): q(x) = p(x) [F(r)^n - F(r-)^n] / P(R = r), F the reward's CDF under p."""
    if n < 1:
        raise ValueError(f"best-of-N needs N >= 1, got {n}")
    levels, inv = np.unique(r, return_inverse=True)
    mass = np.bincount(inv, weights=p, minlength=len(levels))
    hi = np.cumsum(mass)
    lo = hi - mass
    top = hi ** n - lo ** n
    return p * np.where(mass[inv] > 0, top[inv] / np.where(mass[inv] > 0, mass[inv], 1), 0.0)


def tilt(p: np.ndarray, r: np.ndarray, beta: float) -> np.ndarray:
    """The KL-optimal tilt p exp(r / beta) / Z: the highest mean reward at its KL to p."""
    w = np.log(np.maximum(p, 1e-300)) + r / beta
    w = np.exp(w - w.max()) * (p > 0)
    return w / w.sum()


def tilt_frontier(p: np.ndarray, r: np.ndarray, kl_target: float, iters: int = 80) -> float:
    """The highest mean reward of any distribution within KL ``kl_target`` of ``p``: the tilt's reward
    at the beta where its KL equals ``kl_target`` (bisection on log beta; KL falls as beta grows)."""
    from .dd import kl

    if kl_target <= 0:
        return float(p @ r)
    lo, hi = -12.0, 12.0                                                 # log beta
    if kl(tilt(p, r, np.exp(lo)), p) <= kl_target:
        return float(tilt(p, r, np.exp(lo)) @ r)
    for _ in range(iters):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if kl(tilt(p, r, np.exp(mid)), p) < kl_target else (mid, hi)
    return float(tilt(p, r, np.exp(hi)) @ r)


def matched_gap(sepo_kl, sepo_r, base_kl, base_r) -> list[tuple[float, float, float]]:
    """(KL, SEPO reward, baseline reward) at each SEPO point whose KL lies inside the baseline's
    KL range; the baseline's reward is interpolated linearly in KL on its curve sorted by KL."""
    order = np.argsort(base_kl)
    bk, br = np.asarray(base_kl)[order], np.asarray(base_r)[order]
    return [(float(k), float(r), float(np.interp(k, bk, br))) for k, r in zip(sepo_kl, sepo_r)
            if bk[0] <= k <= bk[-1]]
