"""sepo's training runs: pre-training, SEPO (and its shuffled-reward control) and reward-weighted
fine-tuning, each a function of a model, its settings and a seed; the exact (KL, mean reward) of
every checkpoint comes from :func:`stages.sepo.dd.exact_distribution`."""
from __future__ import annotations

import copy

import numpy as np
import torch

from stages.common.optim import Adam

from .dd import Denoiser, exact_distribution, kl, masked_loss, sample
from .policy import ARM_SETUP, ARMS, group_advantages, ppo_clip_loss, released_advantages, released_loss, score_objective, surrogate_loglik


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
         include_self: bool = True, objective: str = "surrogate", shuffle: bool = False, snis_samples: int = 2,
         progress: bool = False) -> tuple[Denoiser, list[dict]]:
    """SEPO from the pre-trained model: each step samples ``groups`` x ``group_size`` sequences,
    standardises their rewards (permuted at random within the batch when ``shuffle``: the control)
    and takes ``inner`` Adam steps (grad-norm clip 1) on the objective: "released" the released
    loss (:func:`released_loss`: a copy of the model as it was at the step's start is the old
    policy; rewards standardised across groups as the released code does; ``snis_samples`` = its M),
    "score" the re-derived variant (:func:`score_objective`), "surrogate" the clipped ratio of the
    local surrogate. Returns the model and its exact curve (step, KL, reward)."""
    if objective not in ("released", "score", "surrogate"):
        raise ValueError(f"unknown SEPO objective {objective!r}")
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
        if objective == "released":
            adv = torch.from_numpy(released_advantages(r, groups)).float()
            old_model = copy.deepcopy(model)
        else:
            adv = torch.from_numpy(group_advantages(r, groups, per_group)).float()
            with torch.no_grad():
                old = surrogate_loglik(model, x, include_self)
        for _ in range(inner):
            if objective == "released":
                loss = released_loss(model, old_model, x, adv, groups, clip, snis_samples, gen)
            elif objective == "surrogate":
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


def run_seed(x: np.ndarray, length: int, reward, r_all: np.ndarray, p, seed: int, progress: bool = False,
             log=print) -> dict:
    """One verdict seed's training, from its data ``x``: pre-training, the SEPO arms (the released
    loss, the same run with shuffled rewards: the control, and the re-derived variant, all from the
    same pre-trained model with the same settings ``p.sepo`` and the same sampling seed) and RWFT at
    each temperature. Every random source is named from ``seed`` (pre-training seed*1000+1, SEPO
    +2, RWFT's samples +3, RWFT +4), so a seed's results do not depend on the other seeds run.

    Returns the models (``pretrained``, ``released``), the pre-trained exact distribution
    ``p_pre``, every arm's exact curve, RWFT's curve, pre-training figures and CPU seconds."""
    import time

    cpu: dict[str, float] = {}
    t0 = time.process_time()
    pre, losses = pretrain(x, p.pretrain.hidden, p.pretrain.layers, p.pretrain.steps, p.pretrain.batch,
                           p.pretrain.lr, seed * 1000 + 1, progress=progress)
    p_pre = exact_distribution(pre)
    cpu["pretrain"] = time.process_time() - t0
    s = p.sepo
    kw = dict(steps=s.steps, groups=s.groups, group_size=s.group_size, inner=s.inner, lr=s.lr, clip=s.clip,
              per_group=s.per_group, eval_every=s.eval_every, include_self=False, snis_samples=s.snis_samples,
              progress=progress)
    curves, models = {}, {"pretrained": pre}
    for arm in ARMS:
        objective, shuffle = ARM_SETUP[arm]
        t0 = time.process_time()
        model, curves[arm] = sepo(pre, reward, p_pre, r_all, seed=seed * 1000 + 2, objective=objective,
                                  shuffle=shuffle, **kw)
        cpu[arm] = time.process_time() - t0
        if arm == "released":
            models["released"] = model
        log(f"    seed {seed} {arm}: reward {curves[arm][0]['reward']:.3f} -> {curves[arm][-1]['reward']:.3f} "
            f"at KL {curves[arm][-1]['kl']:.3f} ({cpu[arm]:.1f} CPU s)")
    t0 = time.process_time()
    rp = p.rwft
    smp = sample(pre, rp.samples, torch.Generator().manual_seed(seed * 1000 + 3)).numpy()
    rs = reward(smp)
    rw = [{"temperature": None, "kl": 0.0, "reward": float(p_pre @ r_all)}]
    for tau in rp.temperatures:
        q = exact_distribution(rwft(pre, smp, rs, tau, steps=rp.steps, batch=rp.batch, lr=rp.lr, seed=seed * 1000 + 4))
        rw.append({"temperature": tau, "kl": kl(q, p_pre), "reward": float(q @ r_all)})
    curves["rwft"] = rw
    cpu["rwft"] = time.process_time() - t0
    log(f"    seed {seed} RWFT: KL {rw[1]['kl']:.3f}..{rw[-1]['kl']:.3f}, reward up to {max(c['reward'] for c in rw):.3f} "
        f"({cpu['rwft']:.1f} CPU s)")
    return {"models": models, "p_pre": p_pre, "curves": curves, "cpu": cpu,
            "pretrain": {"loss_first": losses[0], "loss_last100_mean": float(np.mean(losses[-100:]))}}
