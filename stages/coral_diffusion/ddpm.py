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

The stages train, sample and encode many models at once (every verdict seed, both data sets, every
arm): a *stack* holds the models' parameters with a leading model dimension (:func:`stack_states`),
and :func:`stacked_forward` runs them all with batched matrix products, each model on its own
inputs. A model's slice gives the same numbers whatever else is in the stack (tested), and the same
function as :func:`build_model`'s module (to float rounding), which serves a single model (pyfunc).
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
    give a weighted mean. 0 when no anchor has a positive. ``z`` (..., n, d) and ``y`` (..., n):
    leading dimensions are separate batches (one loss each, shape ``z.shape[:-2]``)."""
    import torch

    if temperature <= 0:
        raise ValueError(f"supcon_loss: temperature must be > 0, got {temperature}")
    z = torch.nn.functional.normalize(z, dim=-1)
    n = z.shape[-2]
    logits = z @ z.transpose(-1, -2) / temperature
    self_mask = torch.eye(n, dtype=torch.bool, device=z.device)
    logits = logits.masked_fill(self_mask, float("-inf"))
    log_prob = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    pos = (y.unsqueeze(-2) == y.unsqueeze(-1)) & ~self_mask
    n_pos = pos.sum(-1)
    has = (n_pos > 0).to(z.dtype)
    per_anchor = -log_prob.masked_fill(~pos, 0.0).sum(-1) / n_pos.clamp_min(1)
    w = has if weights is None else weights.to(z.dtype) * has
    return (per_anchor * w).sum(-1) / w.sum(-1).clamp_min(1e-12)


# ---------------------------------------------------------------------------------------------
# training and sampling


def stack_states(states: list[dict]) -> dict:
    """The stack of models' state dicts (:func:`build_model`'s keys): each Linear weight (out, in)
    as (M, in, out), each bias as (M, 1, out), the label embedding as (M, classes, emb); fresh leaf
    tensors (trainable as one)."""
    import torch

    out = {}
    for k in states[0]:
        v = torch.stack([st[k].detach() for st in states])
        if k.endswith(".weight") and k != "label.weight":
            v = v.transpose(1, 2)
        elif k.endswith(".bias"):
            v = v.unsqueeze(1)
        out[k] = v.contiguous().clone()
    return out


def unstack_state(P: dict, i: int) -> dict:
    """Model ``i``'s state dict (for :func:`build_model`'s module) from a stack."""
    out = {}
    for k, v in P.items():
        w = v[i].detach()
        if k.endswith(".weight") and k != "label.weight":
            w = w.T
        elif k.endswith(".bias"):
            w = w[0]
        out[k] = w.contiguous().clone()
    return out


def stacked_forward(P: dict, x, t, y, class_in_encoder: bool, with_bottleneck: bool = False):
    """:func:`build_model`'s forward for every model of the stack ``P`` at once: ``x`` (M, n, 64),
    ``t`` and ``y`` (M, n) (long). Returns eps (M, n, 64) [and the bottleneck (M, n, b)]."""
    import torch
    from torch.nn.functional import silu

    def lin(name, h):
        return torch.baddbmm(P[f"{name}.bias"], h, P[f"{name}.weight"])

    def block(name, h, c):
        return silu(lin(f"{name}.lin2", silu(lin(f"{name}.lin1", h) + lin(f"{name}.cond", c))))

    M = x.shape[0]
    emb = P["time.0.weight"].shape[1]
    te = lin("time.2", silu(lin("time.0", time_features(t, emb))))
    c = te + P["label.weight"][torch.arange(M, device=x.device)[:, None], y]
    ce = c if class_in_encoder else te
    d1 = block("down1", x, ce)
    d2 = block("down2", d1, ce)
    z = block("mid", d2, ce)                                # the bottleneck
    u2 = block("up2", torch.cat([z, d2], -1), c)
    u1 = block("up1", torch.cat([u2, d1], -1), c)
    eps = lin("out", u1)
    return (eps, z) if with_bottleneck else eps


def stacked_head(P: dict, z):
    """CORAL's projection head of every model of the stack on its bottleneck ``z`` (M, n, b)."""
    import torch
    from torch.nn.functional import silu

    h = silu(torch.baddbmm(P["head.0.bias"], z, P["head.0.weight"]))
    return torch.baddbmm(P["head.2.bias"], h, P["head.2.weight"])


def train_stacked(jobs: list[dict], *, T: int, hidden: int, bottleneck: int, proj: int, label_init: float,
                  class_in_encoder: bool, steps: int, batch: int, lr: float, coral_weight: float, temperature: float,
                  time_scale: float, device="cpu", progress=None):
    """Train one model per job, all at once as a stack. A job is ``{"x": (n, 64) images in [-1, 1],
    "y": labels, "seed": int, "con_y": labels of the contrastive term or None (no CORAL term)}``.
    Each model starts from :func:`build_model`'s weights under ``torch.manual_seed(seed)`` and draws
    its batches, steps and noise from its own generator seeded with ``seed``: jobs with the same
    seed and data start alike and see the same batches, with or without the CORAL term (the arms of
    one seed are paired). The CORAL term is ``coral_weight`` x the batch mean of
    exp((1 - t/T) / time_scale) x SupCon on the projected bottleneck, labels ``con_y``.
    ``progress(n)`` is called every step. Returns (the stack, on CPU, detached; diffusion losses
    (steps, M); contrastive losses (steps, M), NaN for a job without the term)."""
    import torch

    states = []
    for j in jobs:
        torch.manual_seed(j["seed"])
        states.append(build_model(hidden, bottleneck, proj, label_init=label_init,
                                  class_in_encoder=class_in_encoder).state_dict())
    P = {k: v.to(device).requires_grad_() for k, v in stack_states(states).items()}
    opt = torch.optim.Adam(P.values(), lr=lr, fused=True)   # one fused kernel per tensor: the same update, ~12 % faster here
    abar = torch.tensor(alpha_bars(linear_betas(T)), dtype=torch.float32, device=device)
    gens = [torch.Generator().manual_seed(j["seed"]) for j in jobs]
    X = [torch.as_tensor(j["x"], dtype=torch.float32) for j in jobs]
    Y = [torch.as_tensor(j["y"], dtype=torch.long) for j in jobs]
    C = [torch.as_tensor(j["y"] if j["con_y"] is None else j["con_y"], dtype=torch.long) for j in jobs]
    w = torch.tensor([coral_weight if j["con_y"] is not None else 0.0 for j in jobs], device=device)
    on = w > 0
    on_np = on.cpu().numpy()
    diff_losses = np.zeros((steps, len(jobs)))
    con_losses = np.full((steps, len(jobs)), np.nan)
    for step in range(steps):
        xs, ys, cs, ts, ns = [], [], [], [], []
        for g, x, y, c in zip(gens, X, Y, C):
            idx = torch.randint(0, len(x), (batch,), generator=g)
            ts.append(torch.randint(0, T, (batch,), generator=g))
            ns.append(torch.randn(batch, N_PIXELS, generator=g))
            xs.append(x[idx])
            ys.append(y[idx])
            cs.append(c[idx])
        x0, yb, cb = torch.stack(xs).to(device), torch.stack(ys).to(device), torch.stack(cs).to(device)
        t, noise = torch.stack(ts).to(device), torch.stack(ns).to(device)
        eps, z = stacked_forward(P, q_sample(x0, t, noise, abar), t, yb, class_in_encoder, with_bottleneck=True)
        loss_d = ((eps - noise) ** 2).mean(dim=(1, 2))
        # the CORAL term of every model, weight 0 for a job without it: the backward pass then has
        # the same shape for every model, so a model's numbers do not depend on the stack's other jobs
        loss_c = supcon_loss(stacked_head(P, z), cb, temperature)
        scale = torch.exp((1.0 - t.float() / T) / time_scale).mean(1)
        loss = loss_d.sum() + (w * scale * loss_c).sum()
        con_losses[step, on_np] = loss_c.detach()[on].cpu().numpy()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        diff_losses[step] = loss_d.detach().cpu().numpy()
        if progress is not None:
            progress(1)
    return {k: v.detach().cpu() for k, v in P.items()}, diff_losses, con_losses


def train_ddpm(x, y, *, T: int, hidden: int, bottleneck: int, proj: int, label_init: float, class_in_encoder: bool,
               steps: int, batch: int, lr: float, coral_weight: float, temperature: float, time_scale: float, seed: int,
               device="cpu", con_y=None):
    """One model (:func:`train_stacked` with one job): the CORAL term when ``coral_weight > 0``,
    on labels ``con_y`` (default ``y``). Returns (the module in eval mode, diffusion losses,
    contrastive losses: empty without the term) as lists."""
    job = {"x": x, "y": y, "seed": seed, "con_y": (y if con_y is None else con_y) if coral_weight > 0 else None}
    P, dl, cl = train_stacked([job], T=T, hidden=hidden, bottleneck=bottleneck, proj=proj, label_init=label_init,
                              class_in_encoder=class_in_encoder, steps=steps, batch=batch, lr=lr,
                              coral_weight=coral_weight, temperature=temperature, time_scale=time_scale, device=device)
    model = build_model(hidden, bottleneck, proj, label_init=label_init, class_in_encoder=class_in_encoder)
    model.load_state_dict(unstack_state(P, 0))
    return model.eval(), dl[:, 0].tolist(), (cl[:, 0].tolist() if coral_weight > 0 else [])


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


def _seed_noise(seeds: list[int], stream: int):
    """(draw(n) -> (M, n, 64) noise, one generator per distinct seed seeded ``seed + stream``): every
    model of a seed gets that seed's draw (the arms of a seed see the same noise), and a seed's draws
    do not depend on the other seeds in the stack."""
    import torch

    gens = {s: torch.Generator().manual_seed(s + stream) for s in dict.fromkeys(seeds)}

    def draw(n: int):
        by_seed = {s: torch.randn(n, N_PIXELS, generator=g) for s, g in gens.items()}
        return torch.stack([by_seed[s] for s in seeds])
    return draw


def sample_stacked(P: dict, labels, seeds: list[int], *, T: int, sample_steps: int, class_in_encoder: bool,
                   device="cpu", progress=None, models_per_call: int | None = None):
    """Images (M, n, 64) in [-1, 1] of every model of the stack ``P`` for the classes ``labels``
    (n,), as :func:`sample` draws them: model m's noise is that of :func:`sample` with seed
    ``seeds[m]`` (the models of one seed share it). ``models_per_call``: sample that many models
    at a time (the same numbers; with thousands of images a model, a stack of 25 was slower than
    groups of 5: benchmarks/coral_diffusion/seeds.py). ``progress(n)`` after each denoising step
    of each group."""
    if not 1 <= sample_steps <= T:
        raise ValueError(f"sample_stacked: sample_steps must be in 1..T={T}, got {sample_steps}")
    M = len(seeds)
    step = models_per_call or M
    return np.concatenate([_sample_group({k: v[i:i + step] for k, v in P.items()}, labels, list(seeds[i:i + step]),
                                         T=T, sample_steps=sample_steps, class_in_encoder=class_in_encoder,
                                         device=device, progress=progress) for i in range(0, M, step)])


def _sample_group(P: dict, labels, seeds: list[int], *, T: int, sample_steps: int, class_in_encoder: bool,
                  device, progress):
    import torch

    labels = np.array(labels, dtype=np.int64)
    M, n = len(seeds), len(labels)
    betas = linear_betas(T)
    abar = alpha_bars(betas)
    noise = _seed_noise(list(seeds), 0)
    P = {k: v.to(device) for k, v in P.items()}
    y = torch.as_tensor(labels, device=device).expand(M, n)
    with torch.no_grad():
        x = noise(n).to(device)
        if sample_steps == T:                                           # ancestral DDPM
            for t in range(T - 1, -1, -1):
                eps = stacked_forward(P, x, torch.full((M, n), t, dtype=torch.long, device=device), y, class_in_encoder)
                a, ab = 1 - betas[t], abar[t]
                x = (x - betas[t] / math.sqrt(1 - ab) * eps) / math.sqrt(a)
                if t > 0:
                    x = x + math.sqrt(betas[t] * (1 - abar[t - 1]) / (1 - ab)) * noise(n).to(device)
                if progress is not None:
                    progress(1)
        else:                                                           # DDIM, eta = 0
            ts = np.unique(np.linspace(0, T - 1, sample_steps).round().astype(int))[::-1]
            for i, t in enumerate(ts):
                eps = stacked_forward(P, x, torch.full((M, n), int(t), dtype=torch.long, device=device), y,
                                      class_in_encoder)
                ab = abar[t]
                x0 = ((x - math.sqrt(1 - ab) * eps) / math.sqrt(ab)).clamp(-1, 1)
                ab_prev = abar[ts[i + 1]] if i + 1 < len(ts) else 1.0
                eps = (x - math.sqrt(ab) * x0) / math.sqrt(1 - ab)
                x = math.sqrt(ab_prev) * x0 + math.sqrt(1 - ab_prev) * eps
                if progress is not None:
                    progress(1)
    return x.clamp(-1, 1).cpu().numpy()


def bottleneck_stacked(P: dict, x, y, t_fracs, seeds: list[int], *, T: int, class_in_encoder: bool):
    """Bottleneck activations of every model of the stack for its real images ``x`` (M, n, 64) with
    labels ``y`` (M, n), noised to each step round(f * (T - 1)) for f in ``t_fracs``, as
    :func:`bottleneck_features` with seed ``seeds[m]`` draws the noise; (M, len(t_fracs), n, b)."""
    import torch

    abar = torch.tensor(alpha_bars(linear_betas(T)), dtype=torch.float32)
    X = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    Y = torch.as_tensor(np.asarray(y), dtype=torch.long)
    noise = _seed_noise(list(seeds), 0)
    feats = []
    with torch.no_grad():
        for f in t_fracs:
            t = torch.full(Y.shape, int(round(f * (T - 1))), dtype=torch.long)
            _, z = stacked_forward(P, q_sample(X, t, noise(X.shape[1]), abar), t, Y, class_in_encoder,
                                   with_bottleneck=True)
            feats.append(z.numpy())
    return np.stack(feats, axis=1)


# ---------------------------------------------------------------------------------------------
# saving and loading


def model_config(p, sample_steps: int) -> dict:
    """The sizes that rebuild a model (from the train params) and the sampler's step count."""
    return {"T": p.T, "hidden": p.hidden, "bottleneck": p.bottleneck, "proj": p.proj, "label_init": p.label_init,
            "class_in_encoder": p.class_in_encoder, "sample_steps": sample_steps, "n_pixels": N_PIXELS}


def save_mlflow(target, model, config: dict, labels) -> None:
    """Write ``model`` as an MLflow pyfunc folder at ``target`` (atomically): ``weights.pt`` (a state
    dict), ``config.json`` and ``pyfunc.py`` (models from code). Its input example is the class
    ``labels`` (a few real ones, int64) with the param ``seed`` 0, from which MLflow infers its
    signature (inputs, outputs, and the param ``seed`` with default 0)."""
    import json
    import tempfile
    from pathlib import Path

    import pandas as pd
    import torch

    from stages.common.mlmodel import save_pyfunc

    with tempfile.TemporaryDirectory() as scratch:
        weights, cfg = Path(scratch) / "weights.pt", Path(scratch) / "config.json"
        torch.save(model.state_dict(), weights)
        cfg.write_text(json.dumps(config, sort_keys=True, indent=1))
        example = (pd.DataFrame({"label": np.asarray(labels, dtype=np.int64)}), {"seed": 0})
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights, "config": cfg},
                    input_example=example)


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
