"""sepo's training runs: pre-training, SEPO (and its shuffled-reward control) and reward-weighted
fine-tuning, each a function of a model, its settings and a seed; the exact (KL, mean reward) of
every checkpoint comes from :func:`stages.sepo.dd.exact_distribution`."""
from __future__ import annotations

import copy

import numpy as np
import torch

from stages.common.optim import Adam

from .dd import Denoiser, exact_distribution, kl, masked_loss, sample
from .policy import group_advantages, ppo_clip_loss, score_objective, surrogate_loglik


def pretrain(x: np.ndarray, hidden: int, layers: int, steps: int, batch: int, lr: float, seed: int,
             progress: bool = False) -> tuple[Denoiser, list[float]]:
    """Fit the denoiser to the data ``x`` [n, L] with the masked-diffusion ELBO (Adam)."""
    from tqdm import tqdm

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = Denoiser(x.shape[1], hidden, layers)
    opt = Adam(model.parameters(), lr=lr)
    data = torch.from_numpy(np.asarray(x, dtype=np.int64))
    losses = []
    for _ in tqdm(range(steps), desc="sepo: pre-training", disable=not progress, mininterval=2):
        idx = torch.randint(0, len(data), (batch,), generator=gen)
        loss = masked_loss(model, data[idx], gen)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return model, losses


def _clip_grad(model: Denoiser, max_norm: float) -> None:
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)


def sepo(pre: Denoiser, reward, p_pre: np.ndarray, r_all: np.ndarray, *, steps: int, groups: int,
         group_size: int, inner: int, lr: float, clip: float, per_group: bool, eval_every: int, seed: int,
         include_self: bool = True, objective: str = "surrogate", shuffle: bool = False, progress: bool = False) -> tuple[Denoiser, list[dict]]:
    """SEPO from the pre-trained model: each step samples ``groups`` x ``group_size`` sequences,
    standardises their rewards (permuted at random when ``shuffle``: the control) and takes ``inner``
    Adam steps on the clipped surrogate. Returns the model and its exact curve (step, KL, reward)."""
    from tqdm import tqdm

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = copy.deepcopy(pre)
    opt = Adam(model.parameters(), lr=lr)
    curve = [{"step": 0, "kl": 0.0, "reward": float(p_pre @ r_all)}]
    for step in tqdm(range(1, steps + 1), desc="sepo: SEPO" + (" (shuffled)" if shuffle else ""),
                     disable=not progress, mininterval=2):
        x = sample(model, groups * group_size, gen)
        r = reward(x.numpy())
        if shuffle:
            r = rng.permutation(r)
        adv = torch.from_numpy(group_advantages(r, groups, per_group)).float()
        with torch.no_grad():
            old = surrogate_loglik(model, x, include_self)
        for _ in range(inner):
            if objective == "surrogate":
                loss = ppo_clip_loss(torch.exp(surrogate_loglik(model, x, include_self) - old), adv, clip)
            else:
                loss = score_objective(model, x, adv, old, clip)
            opt.zero_grad()
            loss.backward()
            _clip_grad(model, 1.0)
            opt.step()
        if step % eval_every == 0 or step == steps:
            q = exact_distribution(model)
            curve.append({"step": step, "kl": kl(q, p_pre), "reward": float(q @ r_all)})
    return model, curve


def rwft(pre: Denoiser, samples: np.ndarray, r: np.ndarray, temperature: float, *, steps: int, batch: int,
         lr: float, seed: int) -> Denoiser:
    """Reward-weighted fine-tuning: the masked-diffusion loss on pre-trained ``samples``, each weighted
    by exp(r / temperature) (normalised to mean 1), from the pre-trained weights."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = copy.deepcopy(pre)
    opt = Adam(model.parameters(), lr=lr)
    w = np.exp((r - r.max()) / temperature)
    w = torch.from_numpy(w / w.mean()).float()
    data = torch.from_numpy(np.asarray(samples, dtype=np.int64))
    for _ in range(steps):
        idx = torch.randint(0, len(data), (batch,), generator=gen)
        loss = masked_loss(model, data[idx], gen, weights=w[idx])
        opt.zero_grad()
        loss.backward()
        _clip_grad(model, 1.0)
        opt.step()
    return model
