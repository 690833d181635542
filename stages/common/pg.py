"""The policy-gradient core every RL study shares: small, pure tensor functions, each tested on a
case with a known answer (tests/common/test_pg.py). PPO for gymnasium environments is
stable-baselines3's; these are for what SB3 does not cover: GRPO-style group advantages, clipped
surrogates over token sequences, a KL penalty to a reference policy, and DPO.

* :func:`group_advantages`: GRPO's group-relative advantage, (r - group mean) / (group std + eps),
  one group per prompt / initial state; ``scale=False`` keeps only the centring (Dr. GRPO).
* :func:`clipped_surrogate`: PPO's clipped objective as a loss to minimise,
  -mean(min(rho A, clip(rho, 1 - eps_low, 1 + eps_high) A)), rho = exp(logp_new - logp_old); on
  token sequences (2-D log-probabilities with a mask) the mean is over the valid tokens and a
  sequence's advantage is broadcast to its tokens.
* :func:`kl_k3`: the k3 estimator of KL(pi || pi_ref) from samples of pi,
  exp(ref - new) - (ref - new) - 1: unbiased, and never negative.
* :func:`dpo_loss`: DPO's loss on sequence log-likelihoods,
  -mean(log sigmoid(beta ((lw - rw) - (ll - rl)))), with the reference policy's rw, rl.
* :func:`token_logp`, :func:`sequence_logp`, :func:`masked_mean`: the bookkeeping around them.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def masked_mean(x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean of ``x`` over the entries where ``mask`` is true (all of them without a mask)."""
    if mask is None:
        return x.mean()
    mask = mask.to(x.dtype)
    if mask.shape != x.shape:
        raise ValueError(f"mask must have the shape of x, got {tuple(mask.shape)} and {tuple(x.shape)}")
    n = mask.sum()
    if n <= 0:
        raise ValueError("mask selects no entry")
    return (x * mask).sum() / n


def group_advantages(rewards: torch.Tensor, groups: torch.Tensor, eps: float = 1e-6,
                     scale: bool = True) -> torch.Tensor:
    """Advantage of each sample within its group: (r - group mean) / (group std + eps), the std
    without Bessel's correction (``scale=False``: r - group mean). A group whose rewards are all
    equal gets 0: it carries no learning signal."""
    rewards = torch.as_tensor(rewards, dtype=torch.float32)
    groups = torch.as_tensor(groups)
    if rewards.shape != groups.shape or rewards.dim() != 1:
        raise ValueError(f"rewards and groups must be 1-D of one length, got {tuple(rewards.shape)} and {tuple(groups.shape)}")
    if eps <= 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    out = torch.zeros_like(rewards)
    for g in torch.unique(groups):
        m = groups == g
        r = rewards[m]
        centred = r - r.mean()
        out[m] = centred / (r.std(unbiased=False) + eps) if scale else centred
    return out


def clipped_surrogate(logp_new: torch.Tensor, logp_old: torch.Tensor, adv: torch.Tensor, clip: float,
                      mask: torch.Tensor | None = None, clip_high: float | None = None) -> torch.Tensor:
    """PPO's clipped surrogate loss (to minimise). ``logp_*`` are per sample (1-D) or per token
    (batch x tokens, with ``mask`` marking the valid tokens); ``adv`` is per sample, broadcast to the
    tokens. ``clip_high`` (default ``clip``) widens the upper clip alone (DAPO's clip-higher)."""
    clip_high = clip if clip_high is None else clip_high
    if not 0 < clip < 1:
        raise ValueError(f"clip must be in (0, 1), got {clip}")
    if not 0 < clip_high:
        raise ValueError(f"clip_high must be > 0, got {clip_high}")
    if logp_new.shape != logp_old.shape:
        raise ValueError(f"logp_new and logp_old must have one shape, got {tuple(logp_new.shape)} and {tuple(logp_old.shape)}")
    adv = torch.as_tensor(adv, dtype=logp_new.dtype)
    if logp_new.dim() == 2 and adv.dim() == 1:
        adv = adv[:, None].expand_as(logp_new)
    ratio = torch.exp(logp_new - logp_old)
    per = -torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip_high) * adv)
    return masked_mean(per, mask)


def kl_k3(logp_new: torch.Tensor, logp_ref: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean k3 estimate of KL(pi_new || pi_ref) over samples drawn from pi_new."""
    d = logp_ref - logp_new
    return masked_mean(torch.exp(d) - d - 1, mask)


def dpo_loss(logp_w: torch.Tensor, logp_l: torch.Tensor, ref_w: torch.Tensor, ref_l: torch.Tensor,
             beta: float) -> torch.Tensor:
    """DPO's loss for preferred (w) over rejected (l) sequences."""
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    margin = (logp_w - ref_w) - (logp_l - ref_l)
    return -F.logsigmoid(beta * margin).mean()


def token_logp(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """log pi(token | prefix) of each position: ``logits`` (batch x tokens x vocab), ``tokens``
    (batch x tokens) -> (batch x tokens)."""
    if logits.dim() != 3 or tokens.shape != logits.shape[:2]:
        raise ValueError(f"logits must be batch x tokens x vocab and tokens batch x tokens, got {tuple(logits.shape)} and {tuple(tokens.shape)}")
    return torch.log_softmax(logits, dim=-1).gather(-1, tokens.long()[..., None])[..., 0]


def sequence_logp(step_logits: torch.Tensor, actions: torch.Tensor, episode: torch.Tensor, n_episodes: int) -> torch.Tensor:
    """Sum over each episode's steps of log pi(action | state): ``step_logits`` (steps x actions),
    ``actions`` and ``episode`` (the episode index of each step, 0..n_episodes-1)."""
    logp = torch.log_softmax(step_logits, dim=1).gather(1, actions.long()[:, None])[:, 0]
    return torch.zeros(n_episodes, dtype=logp.dtype).index_add(0, episode.long(), logp)
