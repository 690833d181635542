"""diff_purify's models, purification and attacks (torch; imported inside stages only).

- ``Classifier``: a small MLP on the 64 pixels of an 8x8 digit in [0, 1].
- ``ScoreNet``: a noise-prediction MLP eps(x_sigma, sigma) trained by denoising score matching
  (x_sigma = x + sigma * n, n ~ N(0, I); loss ||eps - n||^2 with sigma log-uniform), so that
  D(x_sigma, sigma) = x_sigma - sigma * eps is the denoiser and (D - x_sigma) / sigma^2 the score.
  One is the image prior (trained on clean digits), one the perturbation score (trained on
  delta = x_adv - x of PGD examples of the training set, and zeros for clean inputs, as the paper's
  train_sc_diff_j.py mixes clean images into its adversarial pairs).
- ``purify``: Score-Opt-style test-time optimisation. From x = x_in, K steps at noise levels going
  from sigma_max down to sigma_min: x <- x + eta * [(D_prior(x + sigma n) - x)
  + lam * (delta - D_pert(delta + sigma_d n', sigma_d))], delta = x_in - x. The first bracket is
  sigma^2 * the prior's score at x (the SDS / "x0" direction); the second is sigma_d^2 *
  grad_x log p_pert(x_in - x), which makes the removed part x_in - x look like an adversarial
  perturbation. lam = 0 is the prior-only defence. Clipped to [0, 1] at the end.
- ``BlindScore``: a "prior" that knows nothing about digits (it predicts no noise, so its denoiser
  returns its input): purification with it keeps only the purifier's injected noise. It is the
  control of the must prior-only > none (the randomness of the purifier without the learned prior).
- ``pgd`` (L_inf, sign steps, projection, random start) and ``bpda_eot`` (the purifier's backward
  pass replaced by the identity, gradients averaged over ``eot`` draws of the purifier's noise).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

D_IN = 64
N_CLASSES = 10


class Classifier(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(D_IN, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, N_CLASSES))

    def forward(self, x):
        return self.net(x)


class ScoreNet(nn.Module):
    """eps(x_sigma, sigma): an MLP on [x_sigma, log sigma features] (noise prediction)."""

    def __init__(self, hidden: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(D_IN + 4, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, D_IN))

    def forward(self, x, sigma):
        s = torch.log(sigma).reshape(-1, 1).expand(x.shape[0], 1)
        feats = torch.cat([s, torch.sin(s), torch.cos(s), sigma.reshape(-1, 1).expand(x.shape[0], 1)], dim=1)
        return self.net(torch.cat([x, feats], dim=1))

    def denoise(self, x_sigma, sigma):
        """D(x_sigma, sigma) = x_sigma - sigma * eps(x_sigma, sigma)."""
        sig = sigma if torch.is_tensor(sigma) else torch.tensor(float(sigma))
        return x_sigma - sig.reshape(-1, 1) * self(x_sigma, sig)


class BlindScore(ScoreNet):
    """eps(x_sigma, sigma) = 0: D(x_sigma, sigma) = x_sigma, the denoiser of no knowledge. In the
    purification loop x <- x + eta * (D(x + sigma n) - x) = x + eta * sigma * n: the same injected
    noise as the prior-only defence, without the prior's pull towards the digits."""

    def __init__(self):
        super().__init__(8)

    def forward(self, x, sigma):
        return torch.zeros_like(x)


def train_classifier(x, y, hidden: int, steps: int, lr: float, batch: int, seed: int):
    """Adam on cross-entropy; returns (model in eval mode, losses)."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = Classifier(hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    xt, yt = torch.as_tensor(x), torch.as_tensor(y)
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, len(xt), (batch,), generator=g)
        loss = F.cross_entropy(model(xt[idx]), yt[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model.eval(), losses


def train_score(data, hidden: int, steps: int, lr: float, batch: int, sigma_min: float, sigma_max: float,
                seed: int):
    """Denoising score matching on ``data`` (n, 64), sigma log-uniform in [sigma_min, sigma_max];
    returns (ScoreNet in eval mode, losses)."""
    if not 0 < sigma_min <= sigma_max:
        raise ValueError(f"train_score: need 0 < sigma_min <= sigma_max, got {sigma_min}, {sigma_max}")
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = ScoreNet(hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    xt = torch.as_tensor(data)
    lo, hi = math.log(sigma_min), math.log(sigma_max)
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, len(xt), (batch,), generator=g)
        sig = torch.exp(lo + (hi - lo) * torch.rand(batch, generator=g))
        n = torch.randn(batch, D_IN, generator=g)
        loss = F.mse_loss(model(xt[idx] + sig[:, None] * n, sig), n)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model.eval(), losses


def sigma_schedule(steps: int, sigma_max: float, sigma_min: float) -> list[float]:
    """Geometric from sigma_max down to sigma_min (one level when steps == 1)."""
    if steps == 1:
        return [sigma_max]
    r = (sigma_min / sigma_max) ** (1.0 / (steps - 1))
    return [sigma_max * r ** k for k in range(steps)]


@torch.no_grad()
def purify(x_in, prior: ScoreNet, pert: ScoreNet | None, steps: int, sigma_max: float, sigma_min: float,
           eta: float, lam: float, pert_sigma: float, generator: torch.Generator | None = None,
           noise: bool = True):
    """Score-Opt ("x0") purification of ``x_in`` (n, 64), plus lam * the perturbation score when
    ``pert`` is given and lam > 0 (AAOpt). ``noise=False`` makes it deterministic (tests)."""
    x = x_in.clone()
    for sig in sigma_schedule(steps, sigma_max, sigma_min):
        n = torch.randn(x.shape, generator=generator) if noise else torch.zeros_like(x)
        step = prior.denoise(x + sig * n, sig) - x
        if pert is not None and lam > 0:
            delta = x_in - x
            n2 = torch.randn(x.shape, generator=generator) if noise else torch.zeros_like(x)
            step = step + lam * (delta - pert.denoise(delta + pert_sigma * n2, pert_sigma))
        x = x + eta * step
    return x.clamp(0.0, 1.0)


def pgd(logits_fn, x, y, eps: float, alpha: float, steps: int, generator: torch.Generator | None = None,
        random_start: bool = True):
    """L_inf PGD maximising cross-entropy of ``logits_fn`` (differentiable) around ``x`` in [0, 1]."""
    if eps < 0 or alpha <= 0 or steps < 1:
        raise ValueError(f"pgd: need eps >= 0, alpha > 0, steps >= 1; got {eps}, {alpha}, {steps}")
    x_adv = x.clone()
    if random_start and eps > 0:
        x_adv = x_adv + eps * (2 * torch.rand(x.shape, generator=generator) - 1)
    x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0, 1)
    for _ in range(steps):
        x_adv = x_adv.detach().requires_grad_(True)
        loss = F.cross_entropy(logits_fn(x_adv), y, reduction="sum")
        (g,) = torch.autograd.grad(loss, x_adv)
        x_adv = x_adv.detach() + alpha * g.sign()
        x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0, 1)
    return x_adv.detach()


@torch.no_grad()
def defended_logits(classifier, purifier, x, reps: int):
    """Logits of classifier(purifier(x)) averaged over ``reps`` draws of the purifier's noise."""
    out = 0
    for _ in range(reps):
        out = out + classifier(purifier(x))
    return out / reps


def bpda_eot(classifier, purifier, x, y, eps: float, alpha: float, steps: int, eot: int,
             generator: torch.Generator | None = None, random_start: bool = True, check_every: int = 0,
             defence_reps: int = 1):
    """BPDA+EOT: L_inf PGD on E_noise[CE(classifier(purifier(x')), y)] with the purifier's Jacobian
    taken as the identity (gradient of the loss at purifier(x') applied to x'), averaged over
    ``eot`` purifier draws. Returns (x_adv, fooled): ``fooled`` marks examples whose defended
    prediction (logits averaged over ``defence_reps`` draws) was wrong at any checkpoint (every
    ``check_every`` steps, and at the end)."""
    if eot < 1:
        raise ValueError(f"bpda_eot: eot must be >= 1, got {eot}")
    x_adv = x.clone()
    if random_start and eps > 0:
        x_adv = x_adv + eps * (2 * torch.rand(x.shape, generator=generator) - 1)
    x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0, 1)
    fooled = torch.zeros(len(x), dtype=torch.bool)
    for k in range(steps):
        g = torch.zeros_like(x)
        for _ in range(eot):
            with torch.no_grad():
                xp = purifier(x_adv)
            xp.requires_grad_(True)
            loss = F.cross_entropy(classifier(xp), y, reduction="sum")
            (gk,) = torch.autograd.grad(loss, xp)
            g += gk
        x_adv = x_adv + alpha * (g / eot).sign()
        x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0, 1).detach()
        if check_every and (k + 1) % check_every == 0 and k + 1 < steps:
            fooled |= defended_logits(classifier, purifier, x_adv, defence_reps).argmax(1) != y
    fooled |= defended_logits(classifier, purifier, x_adv, defence_reps).argmax(1) != y
    return x_adv, fooled


def load_weights(path, seed: int | None = None):
    """(nets, config) of one seed from a weights file written by the train stage (every verdict
    seed's networks; ``seed`` defaults to the model's, ``config["model_seed"]``): ``nets`` maps
    classifier, prior, pert (and pert_noise when trained) to models in eval mode."""
    blob = torch.load(path, weights_only=True)
    cfg = blob["config"]
    key = str(cfg["model_seed"] if seed is None else seed)
    if key not in blob["nets"]:
        raise KeyError(f"{path} holds no networks of seed {key} (it has seeds {sorted(blob['nets'])}): "
                       f"run the train stage for this profile")
    return nets_from_state(blob["nets"][key], cfg), cfg


def nets_from_state(state: dict, cfg: dict) -> dict:
    """Models in eval mode from ``{name: state dict}`` (sizes from ``cfg``)."""
    nets = {}
    for name, sd in state.items():
        net = Classifier(cfg["clf_hidden"]) if name == "classifier" else ScoreNet(cfg["score_hidden"])
        net.load_state_dict(sd)
        nets[name] = net.eval()
    return nets
