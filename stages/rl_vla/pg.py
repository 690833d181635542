"""Our own policy-gradient core (GRPO and DPO; PPO itself is stable-baselines3's): small, pure tensor
functions, each tested on a case with a known answer (tests/rl_vla/test_pg.py). Issue 27 folds one
shared version of these into stages/common.

* :func:`group_advantages`: GRPO's group-relative advantage, (R - mean of the group) / (std + eps),
  one group per initial state (the paper's GRPO: trajectories from the same reset form a group).
* :func:`clipped_surrogate`: PPO's clipped objective, as a loss to minimise,
  -mean(min(rho A, clip(rho, 1 - eps, 1 + eps) A)), rho = exp(logp_new - logp_old).
* :func:`dpo_loss`: DPO's loss on trajectory log-likelihoods,
  -mean(log sigmoid(beta ((lw - rw) - (ll - rl)))), with the reference policy's log-likelihoods rw, rl.
* :func:`sequence_logp`: the sum of per-step action log-probabilities of each trajectory.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def group_advantages(rewards: torch.Tensor, groups: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Advantage of each trajectory within its group: (r - group mean) / (group std + eps), the std
    without Bessel's correction; a group whose rewards are all equal gets 0."""
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
        out[m] = (r - r.mean()) / (r.std(unbiased=False) + eps)
    return out


def clipped_surrogate(logp_new: torch.Tensor, logp_old: torch.Tensor, adv: torch.Tensor, clip: float) -> torch.Tensor:
    """PPO's clipped surrogate loss (to minimise)."""
    if not 0 < clip < 1:
        raise ValueError(f"clip must be in (0, 1), got {clip}")
    ratio = torch.exp(logp_new - logp_old)
    return -torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv).mean()


def dpo_loss(logp_w: torch.Tensor, logp_l: torch.Tensor, ref_w: torch.Tensor, ref_l: torch.Tensor,
             beta: float) -> torch.Tensor:
    """DPO's loss for preferred (w) over rejected (l) trajectories."""
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    margin = (logp_w - ref_w) - (logp_l - ref_l)
    return -F.logsigmoid(beta * margin).mean()


def sequence_logp(step_logits: torch.Tensor, actions: torch.Tensor, episode: torch.Tensor, n_episodes: int) -> torch.Tensor:
    """Sum over each episode's steps of log pi(action | state): ``step_logits`` (steps x actions),
    ``actions`` and ``episode`` (the episode index of each step, 0..n_episodes-1)."""
    logp = torch.log_softmax(step_logits, dim=1).gather(1, actions.long()[:, None])[:, 0]
    return torch.zeros(n_episodes, dtype=logp.dtype).index_add(0, episode.long(), logp)
