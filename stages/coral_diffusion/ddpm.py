"""A tiny class-conditional DDPM on 8x8 digits, with an optional CORAL term.

Images are 64 pixels scaled to [-1, 1]. The denoiser is an MLP U-Net: two down blocks
(64 -> h -> h/2), a bottleneck of ``bottleneck`` units, two up blocks with skip connections
(concatenation, as a U-Net's), every block conditioned on a time embedding plus a class embedding
(added, as in a U-Net's residual blocks). It predicts the noise epsilon (Ho et al. 2020).

CORAL (the paper's Sec. 4): a projection head on the bottleneck, a supervised contrastive loss
(Khosla et al. 2020) on the normalised projections of a batch, labels = the images' classes, added
to the diffusion loss with weight ``coral_weight`` times the batch mean of exp((1 - t/T) / time_scale)
(the authors' time-aware scaling: the contrastive term counts more when the batch is less noisy).

The schedule is the linear beta schedule of Ho et al. (beta_1 = 1e-4 ... beta_T = 0.02, rescaled to
T steps so that the total noise matches); sampling is DDIM (eta = 0, deterministic given the
initial noise) on an evenly spaced subset of the T steps, or ancestral DDPM when ``sample_steps == T``.
"""
from __future__ import annotations

import math

import numpy as np

N_CLASSES = 10
N_PIXELS = 64


# ---------------------------------------------------------------------------------------------
# schedule


def linear_betas(T: int) -> np.ndarray:
    """Ho et al.'s linear schedule (1e-4 .. 0.02 at T = 1000) scaled to T steps (both ends times
    1000 / T, the usual rescaling), float64."""
    if T < 2:
        raise ValueError(f"linear_betas: T must be >= 2, got {T}")
    scale = 1000.0 / T
    return np.linspace(scale * 1e-4, min(scale * 0.02, 0.999), T, dtype=np.float64)


def alpha_bars(betas: np.ndarray) -> np.ndarray:
    """bar alpha_t = prod_{s <= t} (1 - beta_s), t = 1..T (index 0 is t = 1)."""
    return np.cumprod(1.0 - np.asarray(betas, dtype=np.float64))


def q_sample(x0, t, noise, abar):
    """x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) noise (torch tensors; ``t`` long, 0-based)."""
    a = abar[t].unsqueeze(-1)
    return a.sqrt() * x0 + (1 - a).sqrt() * noise


# ---------------------------------------------------------------------------------------------
# model


def time_features(t, dim: int):
    """Sinusoidal features of the (0-based) step ``t`` (a long tensor), ``dim`` even."""
    import torch

    half = dim // 2
    freqs = torch.exp(-math.log(1000.0) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    ang = t.float().unsqueeze(-1) * freqs
    return torch.cat([ang.sin(), ang.cos()], dim=-1)


def build_model(hidden: int, bottleneck: int, proj: int, emb: int = 64, label_init: float = 0.02,
                class_in_encoder: bool = True):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, d_in: int, d_out: int):
            super().__init__()
            self.lin1, self.lin2 = nn.Linear(d_in, d_out), nn.Linear(d_out, d_out)
            self.cond = nn.Linear(emb, d_out)

        def forward(self, x, c):
            h = nn.functional.silu(self.lin1(x) + self.cond(c))
            return nn.functional.silu(self.lin2(h))

    class MLPUNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = emb
            self.time = nn.Sequential(nn.Linear(emb, emb), nn.SiLU(), nn.Linear(emb, emb))
            self.label = nn.Embedding(N_CLASSES, emb)
            nn.init.normal_(self.label.weight, std=label_init)
            h1, h2 = hidden, hidden // 2
            self.down1, self.down2 = Block(N_PIXELS, h1), Block(h1, h2)
            self.mid = Block(h2, bottleneck)
            self.up2, self.up1 = Block(bottleneck + h2, h2), Block(h2 + h1, h1)
            self.out = nn.Linear(h1, N_PIXELS)
            self.head = nn.Sequential(nn.Linear(bottleneck, bottleneck), nn.SiLU(), nn.Linear(bottleneck, proj))

        def forward(self, x, t, y, with_bottleneck: bool = False):
            te = self.time(time_features(t, self.emb))
            c = te + self.label(y)
            ce = c if class_in_encoder else te
            d1 = self.down1(x, ce)
            d2 = self.down2(d1, ce)
            z = self.mid(d2, ce)                    # the bottleneck
            u2 = self.up2(torch.cat([z, d2], -1), c)
            u1 = self.up1(torch.cat([u2, d1], -1), c)
            eps = self.out(u1)
            return (eps, z) if with_bottleneck else eps

    return MLPUNet()


# ---------------------------------------------------------------------------------------------
# losses


def supcon_loss(z, y, temperature: float, weights=None):
    """Supervised contrastive loss (Khosla et al. 2020, L_out): for each anchor i with at least
    one positive, -1/|P(i)| sum_{p in P(i)} log softmax_{a != i}(z_i . z_a / tau)[p], on the
    L2-normalised rows of ``z``. Anchors without a positive are skipped; ``weights`` (per anchor)
    give a weighted mean. Returns 0 when no anchor has a positive."""
    import torch

    if temperature <= 0:
        raise ValueError(f"supcon_loss: temperature must be > 0, got {temperature}")
    z = torch.nn.functional.normalize(z, dim=-1)
    n = z.shape[0]
    logits = z @ z.T / temperature
    self_mask = torch.eye(n, dtype=torch.bool, device=z.device)
    logits = logits.masked_fill(self_mask, float("-inf"))
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    pos = (y.unsqueeze(0) == y.unsqueeze(1)) & ~self_mask
    n_pos = pos.sum(1)
    has = n_pos > 0
    if not bool(has.any()):
        return z.sum() * 0.0
    per_anchor = -(log_prob.masked_fill(~pos, 0.0).sum(1)[has]) / n_pos[has]
    if weights is None:
        return per_anchor.mean()
    w = weights[has]
    return (per_anchor * w).sum() / w.sum().clamp_min(1e-12)


# ---------------------------------------------------------------------------------------------
# training and sampling


def train_ddpm(x, y, *, T: int, hidden: int, bottleneck: int, proj: int, label_init: float, class_in_encoder: bool, steps: int, batch: int, lr: float,
               coral_weight: float, temperature: float, time_scale: float, seed: int, device="cpu", progress: bool = False,
               desc: str = "ddpm"):
    """Train one model on images ``x`` (n, 64) in [-1, 1] with labels ``y``; returns the model (eval
    mode, on CPU) and per-step (diffusion loss, contrastive loss) as two lists. Same ``seed`` ->
    same initial weights and same batches and noise whether or not ``coral_weight`` is 0."""
    import torch
    from tqdm import tqdm

    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = build_model(hidden, bottleneck, proj, label_init=label_init, class_in_encoder=class_in_encoder).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    abar = torch.tensor(alpha_bars(linear_betas(T)), dtype=torch.float32, device=device)
    X = torch.as_tensor(x, dtype=torch.float32)
    Y = torch.as_tensor(y, dtype=torch.long)
    n = len(X)
    diff_losses, con_losses = [], []
    for _ in tqdm(range(steps), desc=desc, disable=not progress, mininterval=2):
        idx = torch.randint(0, n, (batch,), generator=g)
        t = torch.randint(0, T, (batch,), generator=g)
        noise = torch.randn(batch, N_PIXELS, generator=g)
        x0, yb, t, noise = X[idx].to(device), Y[idx].to(device), t.to(device), noise.to(device)
        eps, z = model(q_sample(x0, t, noise, abar), t, yb, with_bottleneck=True)
        loss_d = ((eps - noise) ** 2).mean()
        loss = loss_d
        if coral_weight > 0:
            loss_c = supcon_loss(model.head(z), yb, temperature)
            scale = torch.exp((1.0 - t.float() / T) / time_scale).mean()
            loss = loss + coral_weight * scale * loss_c
            con_losses.append(float(loss_c.detach()))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        diff_losses.append(float(loss_d.detach()))
    return model.cpu().eval(), diff_losses, con_losses


def sample(model, labels, *, T: int, sample_steps: int, seed: int, device="cpu", chunk: int = 2000):
    """Images (n, 64) in [-1, 1] for the class ``labels`` (n,), from the noise drawn with ``seed``:
    DDIM (eta = 0) over ``sample_steps`` evenly spaced steps, or ancestral DDPM when
    ``sample_steps == T``. Clipped to [-1, 1]."""
    import torch

    if not 1 <= sample_steps <= T:
        raise ValueError(f"sample: sample_steps must be in 1..T={T}, got {sample_steps}")
    labels = np.array(labels, dtype=np.int64)          # a copy: pandas hands read-only arrays
    if labels.size and (labels.min() < 0 or labels.max() >= N_CLASSES):
        raise ValueError(f"sample: labels must be in 0..{N_CLASSES - 1}, got {sorted(set(labels.tolist()))}")
    betas = linear_betas(T)
    abar = alpha_bars(betas)
    g = torch.Generator().manual_seed(seed)
    model = model.to(device).eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(labels), chunk):
            yb = torch.as_tensor(labels[start:start + chunk], device=device)
            m = len(yb)
            x = torch.randn(m, N_PIXELS, generator=g).to(device)
            if sample_steps == T:                                       # ancestral DDPM
                for t in range(T - 1, -1, -1):
                    eps = model(x, torch.full((m,), t, dtype=torch.long, device=device), yb)
                    a, ab = 1 - betas[t], abar[t]
                    mean = (x - betas[t] / math.sqrt(1 - ab) * eps) / math.sqrt(a)
                    if t > 0:
                        var = betas[t] * (1 - abar[t - 1]) / (1 - ab)
                        mean = mean + math.sqrt(var) * torch.randn(m, N_PIXELS, generator=g).to(device)
                    x = mean
            else:                                                       # DDIM, eta = 0
                ts = np.unique(np.linspace(0, T - 1, sample_steps).round().astype(int))[::-1]
                for i, t in enumerate(ts):
                    eps = model(x, torch.full((m,), int(t), dtype=torch.long, device=device), yb)
                    ab = abar[t]
                    x0 = ((x - math.sqrt(1 - ab) * eps) / math.sqrt(ab)).clamp(-1, 1)
                    ab_prev = abar[ts[i + 1]] if i + 1 < len(ts) else 1.0
                    eps = (x - math.sqrt(ab) * x0) / math.sqrt(1 - ab)
                    x = math.sqrt(ab_prev) * x0 + math.sqrt(1 - ab_prev) * eps
            out.append(x.clamp(-1, 1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, N_PIXELS), dtype=np.float32)


def bottleneck_features(model, x, y, t_fracs, *, T: int, seed: int):
    """Bottleneck activations of ``model`` for real images ``x`` (n, 64) with labels ``y``, noised to
    each step round(f * (T - 1)) for f in ``t_fracs`` (noise drawn with ``seed``); (len(t_fracs), n, b)."""
    import torch

    abar = torch.tensor(alpha_bars(linear_betas(T)), dtype=torch.float32)
    g = torch.Generator().manual_seed(seed)
    X = torch.as_tensor(x, dtype=torch.float32)
    Y = torch.as_tensor(y, dtype=torch.long)
    feats = []
    with torch.no_grad():
        for f in t_fracs:
            t = torch.full((len(X),), int(round(f * (T - 1))), dtype=torch.long)
            noise = torch.randn(X.shape, generator=g)
            _, z = model(q_sample(X, t, noise, abar), t, Y, with_bottleneck=True)
            feats.append(z.numpy())
    return np.stack(feats)


# ---------------------------------------------------------------------------------------------
# saving and loading


def model_config(p, sample_steps: int) -> dict:
    """The sizes that rebuild a model (from the train params) and the sampler's step count."""
    return {"T": p.T, "hidden": p.hidden, "bottleneck": p.bottleneck, "proj": p.proj, "label_init": p.label_init,
            "class_in_encoder": p.class_in_encoder, "sample_steps": sample_steps, "n_pixels": N_PIXELS}


def save_mlflow(target, model, config: dict) -> None:
    """Write ``model`` as an MLflow pyfunc folder at ``target`` (atomically): ``weights.pt`` (a state
    dict), ``config.json`` and ``pyfunc.py`` (models from code)."""
    import json
    import tempfile
    from pathlib import Path

    import torch

    from stages.common.mlmodel import save_pyfunc

    with tempfile.TemporaryDirectory() as scratch:
        weights, cfg = Path(scratch) / "weights.pt", Path(scratch) / "config.json"
        torch.save(model.state_dict(), weights)
        cfg.write_text(json.dumps(config, sort_keys=True, indent=1))
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights, "config": cfg})


def build_from_config(config: dict):
    if config.get("n_pixels") != N_PIXELS:
        raise ValueError(f"the model was trained on {config.get('n_pixels')} pixels, this code makes {N_PIXELS}")
    return build_model(config["hidden"], config["bottleneck"], config["proj"], label_init=config["label_init"],
                       class_in_encoder=config["class_in_encoder"])


def load_weights(weights: str, config: str):
    """(model in eval mode, config) from the files :func:`save_mlflow` wrote (weights_only load)."""
    import json

    import torch

    cfg = json.loads(open(config).read())
    model = build_from_config(cfg)
    model.load_state_dict(torch.load(weights, weights_only=True))
    return model.eval(), cfg


def load_model_dir(model_dir):
    """(model, config) from an MLflow model folder written by :func:`save_mlflow`."""
    from pathlib import Path

    art = Path(model_dir) / "artifacts"
    return load_weights(str(art / "weights.pt"), str(art / "config.json"))
