"""The models of reward_instruct: a class-conditional DDPM on 8x8 digits (MLP epsilon-net), DDIM
sampling with x0 clipping, MLP classifiers (the reward model and the judge), and the two few-step
generator trainings: R0 (reward + weight regularisation + random eta) and distillation + reward.

Images are 64-vectors in [-1, 1]; classes 0..9 play the text prompt.
"""
from __future__ import annotations

import math

N_CLASSES, DIM = 10, 64


def schedule(T: int, beta_max: float):
    """Linear beta from 1e-4 to ``beta_max`` over T steps; returns alpha-bar (T,) as float64 tensor."""
    import torch

    if T < 2 or not 0 < beta_max < 1:
        raise ValueError(f"schedule: needs T >= 2 and 0 < beta_max < 1, got T={T}, beta_max={beta_max}")
    betas = torch.linspace(1e-4, beta_max, T, dtype=torch.float64)
    return torch.cumprod(1 - betas, 0)


def time_embedding(t, dim: int = 32):
    """Sinusoidal embedding of integer timesteps t (B,) -> (B, dim)."""
    import torch

    half = dim // 2
    freqs = torch.exp(-math.log(1000.0) * torch.arange(half, dtype=torch.float32) / half)
    a = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(a), torch.cos(a)], 1)


def make_epsnet(hidden: int, layers: int, temb: int = 32):
    """x (64) + one-hot class (10) + time embedding (temb) -> hidden x layers (SiLU) -> 64."""
    import torch.nn as nn

    dims = [DIM + N_CLASSES + temb] + [hidden] * layers
    mods = []
    for a, b in zip(dims, dims[1:]):
        mods += [nn.Linear(a, b), nn.SiLU()]
    mods.append(nn.Linear(dims[-1], DIM))
    return nn.Sequential(*mods)


def eps_pred(net, x, t, c, temb: int = 32):
    import torch
    import torch.nn.functional as F

    return net(torch.cat([x, F.one_hot(c, N_CLASSES).float(), time_embedding(t, temb)], 1))


def ddim_timesteps(T: int, steps: int) -> list[int]:
    """``steps`` timesteps from T-1 down to 0, evenly spaced (rounded), strictly decreasing."""
    if not 1 <= steps <= T:
        raise ValueError(f"ddim_timesteps: steps must be in [1, T={T}], got {steps}")
    if steps == 1:
        return [T - 1]
    ts = [round((T - 1) * (1 - i / (steps - 1))) for i in range(steps)]
    return ts


def ddim_step(x, eps, ab_t, ab_prev, eta, noise):
    """One DDIM update from alpha-bar ``ab_t`` to ``ab_prev`` (floats; ab_prev=1 means the end).
    x0 is clipped to [-1, 1] and epsilon RECOMPUTED from the clipped x0 (without it, long
    deterministic chains drift off the data). ``eta`` is a float or a (B, 1) tensor. Returns
    (x_prev, x0)."""
    x0 = ((x - math.sqrt(1 - ab_t) * eps) / math.sqrt(ab_t)).clamp(-1, 1)
    eps = (x - math.sqrt(ab_t) * x0) / math.sqrt(1 - ab_t)
    if ab_prev >= 1.0:
        return x0, x0
    sigma = eta * math.sqrt((1 - ab_prev) / (1 - ab_t) * (1 - ab_t / ab_prev))
    dir_coef = (1 - ab_prev - sigma ** 2)
    dir_coef = dir_coef.clamp_min(0).sqrt() if hasattr(dir_coef, "clamp_min") else math.sqrt(max(dir_coef, 0.0))
    return math.sqrt(ab_prev) * x0 + dir_coef * eps + sigma * noise, x0


def sample(net, abar, c, steps: int, gen, eta=0.0, z=None):
    """DDIM sample of classes ``c`` (B,) in ``steps`` steps; noise from torch generator ``gen``
    (initial noise ``z`` if given). Differentiable in the net's weights (call under no_grad to
    sample). Returns x0 (B, 64)."""
    import torch

    T = len(abar)
    ts = ddim_timesteps(T, steps)
    x = torch.randn(len(c), DIM, generator=gen) if z is None else z
    x0 = x
    for i, t in enumerate(ts):
        ab_t = float(abar[t])
        ab_prev = float(abar[ts[i + 1]]) if i + 1 < len(ts) else 1.0
        eps = eps_pred(net, x, torch.full((len(c),), t, dtype=torch.long), c)
        noise = torch.randn(len(c), DIM, generator=gen) if (ab_prev < 1.0 and not _is_zero(eta)) else 0.0
        x, x0 = ddim_step(x, eps, ab_t, ab_prev, eta, noise)
    return x0


def _is_zero(eta) -> bool:
    return isinstance(eta, (int, float)) and eta == 0


def train_ddpm(net, x, y, abar, steps: int, batch: int, lr: float, gen, progress=None):
    """Epsilon-prediction DDPM training on images x (N, 64) with labels y (N,); returns losses."""
    import torch

    from stages.common.optim import Adam

    opt = Adam(net.parameters(), lr=lr)
    T = len(abar)
    ab = abar.float()
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, len(x), (batch,), generator=gen)
        t = torch.randint(0, T, (batch,), generator=gen)
        e = torch.randn(batch, DIM, generator=gen)
        a = ab[t][:, None]
        xt = a.sqrt() * x[idx] + (1 - a).sqrt() * e
        loss = ((eps_pred(net, xt, t, y[idx]) - e) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if progress is not None:
            progress.update(1)
    return losses


def make_classifier(hidden: int, feat: int):
    """64 -> hidden -> feat (the penultimate features) -> 10, SiLU."""
    import torch.nn as nn

    return nn.Sequential(nn.Linear(DIM, hidden), nn.SiLU(), nn.Linear(hidden, feat), nn.SiLU(),
                         nn.Linear(feat, N_CLASSES))


def features(clf, x):
    """The classifier's penultimate features (input of its last layer)."""
    return clf[:-1](x)


def train_classifier(clf, x, y, steps: int, batch: int, lr: float, noise: float, gen):
    """Cross-entropy training with Gaussian input noise ``noise`` (data augmentation); returns losses."""
    import torch
    import torch.nn.functional as F

    from stages.common.optim import Adam

    opt = Adam(clf.parameters(), lr=lr, weight_decay=1e-4)
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, len(x), (batch,), generator=gen)
        xb = x[idx]
        if noise > 0:
            xb = (xb + noise * torch.randn(xb.shape, generator=gen)).clamp(-1, 1)
        loss = F.cross_entropy(clf(xb), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def sq_distance(net, ref):
    """||theta - theta0||^2 over all parameters (``ref``: a list of detached tensors)."""
    return sum(((p - r) ** 2).sum() for p, r in zip(net.parameters(), ref))


def train_generator(net, abar, reward_clf, *, method: str, steps: int, batch: int, lr: float, lam: float,
                    random_eta: bool, gen_steps: int, gen, checkpoints: list[int], on_checkpoint,
                    pool=None, w_reward: float = 1.0, progress=None):
    """Train the few-step generator ``net`` (a copy of the teacher, changed in place).

    method ``r0``: loss = CE(reward_clf(x_gen), c) + lam ||theta - theta0||^2, x_gen from a
    ``gen_steps``-step DDIM with eta ~ U[0, 1] per sample when ``random_eta`` (else eta = 0).
    method ``distill``: loss = MSE(x_gen, teacher target) + w_reward CE(...) + lam ||theta -
    theta0||^2, x_gen from the chain started at the pool's noise (``pool``: dict z, c, target
    from the teacher's many-step DDIM), deterministic (eta = 0) unless ``random_eta`` (the
    distillation baseline runs lam = 0 and eta = 0; with R0's lam and random eta it is R0 with
    the distillation loss put back). ``on_checkpoint(step)`` is called at each step in ``checkpoints``
    (0 = before training). Returns per-step dicts (loss, reward log-prob, ||dtheta||^2)."""
    import torch
    import torch.nn.functional as F

    from stages.common.optim import Adam

    if method not in ("r0", "distill"):
        raise ValueError(f"train_generator: method must be 'r0' or 'distill', got {method!r}")
    if method == "distill" and pool is None:
        raise ValueError("train_generator: method 'distill' needs the teacher's pool of targets")
    for p in reward_clf.parameters():
        p.requires_grad_(False)
    ref = [p.detach().clone() for p in net.parameters()]
    opt = Adam(net.parameters(), lr=lr)
    hist = []
    if 0 in checkpoints:
        on_checkpoint(0)
    for step in range(1, steps + 1):
        penalty = lam * sq_distance(net, ref) if lam > 0 else 0.0
        if method == "r0":
            c = torch.randint(0, N_CLASSES, (batch,), generator=gen)
            eta = torch.rand(batch, 1, generator=gen) if random_eta else 0.0
            x = sample(net, abar, c, gen_steps, gen, eta=eta)
            logp = F.log_softmax(reward_clf(x), 1).gather(1, c[:, None]).mean()
            loss = -logp + penalty
        else:
            idx = torch.randint(0, len(pool["c"]), (batch,), generator=gen)
            c = pool["c"][idx]
            eta = torch.rand(batch, 1, generator=gen) if random_eta else 0.0
            x = sample(net, abar, c, gen_steps, gen, eta=eta, z=pool["z"][idx])
            logp = F.log_softmax(reward_clf(x), 1).gather(1, c[:, None]).mean()
            loss = ((x - pool["target"][idx]) ** 2).mean() - w_reward * logp + penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            hist.append({"loss": float(loss), "reward_logp": float(logp), "dtheta2": float(sq_distance(net, ref))})
        if progress is not None:
            progress.update(1)
        if step in checkpoints:
            on_checkpoint(step)
    return hist


def save_weights(net, path, config: dict) -> None:
    """The net's state dict and its config in one torch file (loaded with weights_only=True)."""
    import torch

    from stages.common.io import atomic_path

    with atomic_path(path) as tmp:
        torch.save({"config": dict(config), "state": net.state_dict()}, tmp)


def load_classifier(path):
    import torch

    blob = torch.load(path, weights_only=True)
    clf = make_classifier(blob["hidden"], 64)
    clf.load_state_dict(blob["state"])
    clf.eval()
    return clf


def load_epsnet(path):
    """(net, abar, config) from :func:`save_weights` of an epsilon-net (config: hidden, layers, T, beta_max)."""
    import torch

    blob = torch.load(path, weights_only=True)
    cfg = blob["config"]
    net = make_epsnet(cfg["hidden"], cfg["layers"])
    net.load_state_dict(blob["state"])
    net.eval()
    return net, schedule(cfg["T"], cfg["beta_max"]), cfg
