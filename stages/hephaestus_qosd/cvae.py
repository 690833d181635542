"""Morph: a mixture of conditional VAEs over per-edge perturbations, conditioned on the edge's
features (the graph around it, its cost, and the Forge solution), and Refine: a Gaussian policy in
the mixture's latent space trained by REINFORCE on each new instance.

Every edge is one row: condition ``c_e`` (:func:`edge_features`), target ``x_e = delta_e / T``.
Component k has an encoder q_k(z | x, c), a decoder p_k(x | z, c) (Gaussian, fixed scale) and a
gate pi_k(c); the loss is the negative mixture bound -log sum_k pi_k(c) exp(ELBO_k).
"""
from __future__ import annotations

import numpy as np

from .qosd import COSTS, Instance, distances, repair, st_distance

N_FEATURES = 12


def edge_features(inst: Instance, forge_delta: np.ndarray) -> np.ndarray:
    """(m, N_FEATURES) float32: w/T; a/3, b, f/12; the cost kind one-hot; the lightest s-t path
    through the edge over T (base weights, and under the Forge solution); how much the s-t
    distance rises without the edge, over T (1 for a bridge); Forge's raise over T; d(s, t)/T;
    a constant."""
    T, m = inst.T, inst.m
    out = np.zeros((m, N_FEATURES), dtype=np.float32)
    out[:, 0] = inst.w / T
    out[:, 1], out[:, 2], out[:, 3] = inst.a / 3.0, inst.b, inst.f / 12.0
    out[:, 4 + COSTS.index(inst.kind)] = 1.0
    u, v = inst.edges[:, 0], inst.edges[:, 1]
    for col, delta in ((7, np.zeros(m)), (8, forge_delta)):
        wt = inst.w + delta
        ds, dt = distances(inst, wt, inst.s), distances(inst, wt, inst.t)
        out[:, col] = np.minimum(ds[u] + wt + dt[v], ds[v] + wt + dt[u]) / T
    d0 = st_distance(inst, np.zeros(m))
    for e in range(m):
        wt = inst.w.copy()
        wt[e] = 1e12
        out[e, 9] = min(1.0, (float(distances(inst, wt, inst.s)[inst.t]) - d0) / T)
    out[:, 10] = forge_delta / T
    out[:, 11] = d0 / T
    return out


def build_model(n_components: int, latent: int, hidden: int, sigma_x: float):
    import torch
    from torch import nn

    class MixtureCVAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.k, self.latent, self.sigma_x = n_components, latent, sigma_x
            f = N_FEATURES
            self.enc = nn.ModuleList(nn.Sequential(nn.Linear(f + 1, hidden), nn.Tanh(), nn.Linear(hidden, 2 * latent))
                                     for _ in range(n_components))
            self.dec = nn.ModuleList(nn.Sequential(nn.Linear(f + latent, hidden), nn.Tanh(), nn.Linear(hidden, 1))
                                     for _ in range(n_components))
            self.gate = nn.Sequential(nn.Linear(f, hidden), nn.Tanh(), nn.Linear(hidden, n_components))

        def decode(self, z, c, k: int):
            """x for latent ``z`` (rows, latent), condition ``c`` (rows, F), component ``k``."""
            return self.dec[k](torch.cat([c, z], dim=-1)).squeeze(-1)

        def decode_mixed(self, z, c, comp):
            """x per row, each row through its own component ``comp`` (rows,) long."""
            outs = torch.stack([self.decode(z, c, k) for k in range(self.k)], dim=-1)
            return outs.gather(-1, comp.unsqueeze(-1)).squeeze(-1)

        def loss(self, x, c):
            """Mean negative mixture ELBO of rows (x, c); also the per-component responsibilities."""
            logpi = torch.log_softmax(self.gate(c), dim=-1)
            elbos = []
            for k in range(self.k):
                mu, logvar = self.enc[k](torch.cat([c, x.unsqueeze(-1)], dim=-1)).chunk(2, dim=-1)
                logvar = logvar.clamp(-8, 4)
                z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
                rec = ((self.decode(z, c, k) - x) ** 2) / (2 * self.sigma_x ** 2)
                kl = 0.5 * (mu ** 2 + logvar.exp() - 1 - logvar).sum(-1)
                elbos.append(-(rec + kl))
            joint = logpi + torch.stack(elbos, dim=-1)
            return -torch.logsumexp(joint, dim=-1).mean(), torch.softmax(joint, dim=-1).detach()

    return MixtureCVAE()


def initial_model(p, seed: int):
    """The mixture as :func:`train_model` starts it for ``seed``: built under
    ``torch.manual_seed(seed)``. Untrained, it is the control arm ``blind`` of evaluate (Refine on
    a Morph that learned nothing). ``p``: n_components, latent, hidden, sigma_x."""
    import torch

    torch.manual_seed(seed)
    return build_model(p.n_components, p.latent, p.hidden, p.sigma_x)


def train_model(x: np.ndarray, c: np.ndarray, p, seed: int, progress: bool = True):
    """Fit the mixture on rows (x, c) with Adam; returns (model, losses per step)."""
    import torch
    from tqdm import tqdm

    from stages.common.optim import Adam

    model = initial_model(p, seed)
    opt = Adam(model.parameters(), lr=p.lr)
    xt, ct = torch.tensor(x, dtype=torch.float32), torch.tensor(c, dtype=torch.float32)
    g = torch.Generator().manual_seed(seed)
    losses = []
    for _ in tqdm(range(p.steps), desc="hephaestus_qosd: mixture CVAE", disable=not progress, mininterval=2):
        idx = torch.randint(len(xt), (min(p.batch, len(xt)),), generator=g)
        loss, _ = model.loss(xt[idx], ct[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return model.eval(), losses


def refine(inst: Instance, model, feats: np.ndarray, forge_delta: np.ndarray, p, fp, seed,
           use_policy: bool = True) -> dict:
    """Refine on one instance: a Gaussian policy N(mu, sigma^2) over each edge's latent, decoded
    by the edge's most likely component, repaired to feasibility (path stressing + trim); REINFORCE
    with a mean baseline on reward -cost / cost(Forge). With ``use_policy=False`` the same number
    of latents are drawn from the prior N(0, I) with no update (the Morph-only ablation).
    ``p``: the refine params, ``fp``: the Forge params (the repair's path stressing); ``seed``:
    an int or a list of ints (numpy's default_rng). Evaluates ``p.iterations * p.batch`` repaired
    samples. Returns the best feasible perturbation seen (Forge's included), the very first
    sample (one Morph sample, repaired: an ablation) and its cost, and the curve of the best cost
    seen after each batch (Forge's included)."""
    import torch

    rng = np.random.default_rng(seed)
    c = torch.tensor(feats, dtype=torch.float32)
    with torch.no_grad():
        comp = model.gate(c).argmax(-1)
    m, dz = inst.m, model.latent
    mu, sigma = np.zeros((m, dz)), float(p.sigma0)
    ref = max(inst.cost(forge_delta), 1e-9)
    best, best_cost = forge_delta.copy(), inst.cost(forge_delta)
    first_sample, first_sample_cost, curve = None, None, []
    for _ in range(p.iterations):
        eps = rng.standard_normal((p.batch, m, dz))
        z = mu[None] + sigma * eps
        with torch.no_grad():
            zt = torch.tensor(z.reshape(-1, dz), dtype=torch.float32)
            x = model.decode_mixed(zt, c.repeat(p.batch, 1), comp.repeat(p.batch)).numpy().reshape(p.batch, m)
        costs = np.empty(p.batch)
        for j in range(p.batch):
            delta = repair(inst, np.maximum(x[j], 0.0) * inst.T, fp.step_frac, fp.credit)
            costs[j] = inst.cost(delta)
            if first_sample is None:
                first_sample, first_sample_cost = delta, costs[j]
            if costs[j] < best_cost - 1e-9:
                best, best_cost = delta, costs[j]
        curve.append(float(best_cost))
        if use_policy:
            r = -costs / ref
            adv = (r - r.mean()) / (r.std() + 1e-8)
            mu = mu + p.lr * np.einsum("b,bmd->md", adv, eps) / (p.batch * sigma)
            sigma = max(sigma * p.sigma_decay, 0.05)
    return {"delta": best, "cost": float(best_cost), "first_sample": first_sample,
            "first_sample_cost": float(first_sample_cost), "curve": curve}


def decode_mean(model, feats: np.ndarray) -> np.ndarray:
    """Each edge's raise over T at z = 0 through its most likely component, clipped at 0."""
    import torch

    with torch.no_grad():
        c = torch.tensor(feats, dtype=torch.float32)
        comp = model.gate(c).argmax(-1)
        x = model.decode_mixed(torch.zeros(len(c), model.latent), c, comp)
    return np.maximum(x.numpy(), 0.0)


def save_mlflow(target, model, p, features: np.ndarray) -> None:
    """Write the mixture as an MLflow pyfunc model folder at ``target`` (atomically): the weights
    (``weights.pt``, a state dict), ``config.json`` (sizes) and ``pyfunc.py`` (models from code).
    ``features`` (a few rows of :func:`edge_features`) are its input example, as float64 columns
    ``f0`` .. (a double column takes float32 as well), from which MLflow infers its signature."""
    import json
    import tempfile
    from pathlib import Path

    import pandas as pd
    import torch

    from stages.common.mlmodel import save_pyfunc

    with tempfile.TemporaryDirectory() as scratch:
        weights, config = Path(scratch) / "weights.pt", Path(scratch) / "config.json"
        torch.save(model.state_dict(), weights)
        config.write_text(json.dumps({"n_components": p.n_components, "latent": p.latent, "hidden": p.hidden,
                                      "sigma_x": p.sigma_x, "n_features": N_FEATURES}, sort_keys=True, indent=1))
        example = pd.DataFrame(np.asarray(features, dtype=np.float64), columns=[f"f{i}" for i in range(N_FEATURES)])
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights, "config": config},
                    input_example=example)


def read_config(config: str) -> dict:
    """The sizes :func:`save_mlflow` wrote (``config.json``), checked against this code's features."""
    import json

    cfg = json.loads(open(config).read())
    if cfg["n_features"] != N_FEATURES:
        raise ValueError(f"{config}: the model was trained on {cfg['n_features']} features, this code makes {N_FEATURES}")
    return cfg


def load_weights(weights: str, config: str):
    """The mixture that :func:`save_mlflow` wrote (weights loaded with weights_only)."""
    import torch

    cfg = read_config(config)
    model = build_model(cfg["n_components"], cfg["latent"], cfg["hidden"], cfg["sigma_x"])
    model.load_state_dict(torch.load(weights, weights_only=True))
    return model.eval()


def load_model_dir(model_dir) -> object:
    """The mixture from an MLflow model folder written by :func:`save_mlflow`."""
    from pathlib import Path

    art = Path(model_dir) / "artifacts"
    return load_weights(str(art / "weights.pt"), str(art / "config.json"))


def untrained_like(model_dir, seed: int):
    """The mixture of the MLflow model folder ``model_dir`` as it was before training on ``seed``
    (:func:`initial_model` with the folder's sizes): the ``blind`` control arm."""
    from pathlib import Path
    from types import SimpleNamespace

    cfg = read_config(str(Path(model_dir) / "artifacts" / "config.json"))
    return initial_model(SimpleNamespace(**cfg), seed).eval()
