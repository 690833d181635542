"""sepo's policy-gradient core (SEPO: the released loss and our re-derived variant) and its
baselines (best-of-N, the KL-optimal tilt, RWFT).

The method of record is the released loss (:func:`released_loss`, written from the facts of the
released code ozekri/SEPO, GRPO_MDLM_DNA: grpo_train.py and diffusion_gosai_update_new.py
``_compute_loss_sepo``, ``_compute_pi_y``, ``compute_expression``; see its docstring). The second
arm is the variant this study first derived (:func:`score_objective`): SEPO writes the gradient of E[R] through the model's concrete score s(x)_y = p(y)/p(x). With
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

# the SEPO arms every seed runs, from the same pre-trained model with the same settings:
# (objective, rewards shuffled within each batch). "released" is the method of record, its
# shuffled twin the control, "variant" the re-derived loss with the sampler's own concrete score.
ARMS = ("released", "released_control", "variant")
ARM_SETUP = {"released": ("released", False), "released_control": ("released", True), "variant": ("score", False)}


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


# The released code evaluates its scores at t = dt = (1 - 1e-5) / 128 (128 sampling steps); the
# log-linear schedule's move chance there is (1 - 1e-5) t and at t - dt it is 0, so its pi(z | y)
# is the model's probabilities times this constant (and 0 on MASK, which our model has no logit for).
RELEASED_MOVE_CHANCE = (1 - 1e-5) ** 2 / 128


def released_advantages(r: np.ndarray, groups: int) -> np.ndarray:
    """The released code's reward standardisation: the rewards as [groups, group_size], each column
    standardised across the groups (mean and unbiased sd over dim 0, sd + 1e-8), flattened back."""
    g = np.asarray(r, dtype=np.float64)
    if g.size % groups:
        raise ValueError(f"{g.size} rewards do not split into {groups} equal groups")
    if groups < 2:
        raise ValueError("the released standardisation needs at least 2 groups (sd across groups)")
    g = g.reshape(groups, -1)
    return ((g - g.mean(0, keepdims=True)) / (g.std(0, ddof=1, keepdims=True) + 1e-8)).reshape(-1)


def hamming_neighbours(x: torch.Tensor) -> torch.Tensor:
    """Every y at Hamming distance <= 1 from each x [n, L]: [n, L, 4, L], y[:, l, v] = x with
    position l set to v (x itself at v = x_l), as the released generate_all_hamming_distance_0_and_1."""
    n, length = x.shape
    y = x[:, None, None, :].expand(n, length, 4, length).clone()
    pos = torch.arange(length)
    y[:, pos, :, pos] = torch.arange(4).expand(n, length, 4).permute(1, 0, 2)
    return y


@torch.no_grad()
def released_pi(model: Denoiser, x: torch.Tensor, m: int, gen: torch.Generator) -> torch.Tensor:
    """The released code's estimate of pi_y [n, L, 4] for each neighbour y of x (``_compute_pi_y``).

    pi(z | y) is the model's output at the clean y times RELEASED_MOVE_CHANCE; ``m`` sequences z are
    drawn from it per y; the importance weights are pi(z_i) / (pi(z_i | y) + 1e-8) with "pi(z_i) ~
    1 / score", where the released code takes the score as the model's LOG-probabilities clamped at
    1e-8: every log-probability is <= 0, so the score is 1e-8 and pi(z_i) is the constant 1e8
    (quirk 1); the self-normalised sum runs over the diagonal of the (sample, position) axes, so
    sample k enters only through position k (quirk 2: positions 0 .. m-1)."""
    n, length = x.shape
    y = hamming_neighbours(x).reshape(-1, length)
    pi_zy = model(y).exp() * RELEASED_MOVE_CHANCE                          # [n L 4, L, 4]
    z = torch.multinomial(pi_zy.reshape(-1, 4), m, replacement=True, generator=gen)
    z = z.view(-1, length, m).transpose(1, 2)                               # [n L 4, m, L]
    pi_sampled = pi_zy.unsqueeze(1).expand(-1, m, length, 4).gather(-1, z.unsqueeze(-1)).squeeze(-1)
    pi_z = 1.0 / 1e-8                                                       # 1 / clamp(log-prob, min=1e-8)
    w = pi_z / (pi_sampled + 1e-8)                                          # [n L 4, m, L]
    k = min(m, length)
    pi_d, w_d = pi_sampled.diagonal(dim1=1, dim2=2)[:, :k], w.diagonal(dim1=1, dim2=2)[:, :k]
    return ((pi_d * w_d).sum(-1) / (w_d.sum(-1) + 1e-8)).view(n, length, 4)


def released_loss(model: Denoiser, old: Denoiser, x: torch.Tensor, adv: torch.Tensor, groups: int, eps: float,
                  m: int, gen: torch.Generator) -> torch.Tensor:
    """The released SEPO loss (``_compute_loss_sepo`` summed over the groups as grpo_train.py does),
    minimised; ``x`` [groups * B, L] in group order, ``adv`` the standardised rewards.

    Per group g of sequences x_g with standardised rewards A_g: log s(x)_{l,v} is the model's
    log-probability of v at position l given the CLEAN x (the released ``forward_at_time`` with
    full scores; the masked-diffusion loss never trains these outputs, quirk 3); rho = (pi_y /
    pi_old) (s_old / s), all without gradient; L_g = min(A_g . sum_{l,v} pi_y rho log s / B,
    A_g . sum_{l,v} pi_y clip(rho, 1 - eps, 1 + eps) log s / B), the min taken on the batch
    totals; the loss is sum_g L_g / groups. The gradient flows through log s alone. pi_old and
    pi_y are estimated for all groups in one call each (the released code loops over the groups;
    the same estimates, other draws)."""
    log_s = model(x)                                                        # [G B, L, 4]
    s_now = log_s.detach().exp()
    with torch.no_grad():
        s_old = old(x).exp()
        pi_old = released_pi(old, x, m, gen)
        pi_y = released_pi(model, x, m, gen)
    rho = (pi_y / pi_old) * (s_old / s_now)
    inner = (pi_y * rho * log_s).sum((1, 2)).view(groups, -1)
    clipped = (pi_y * rho.clamp(1 - eps, 1 + eps) * log_s).sum((1, 2)).view(groups, -1)
    a = adv.view(groups, -1)
    b = a.shape[1]
    return torch.minimum((a * inner).sum(1) / b, (a * clipped).sum(1) / b).sum() / groups
