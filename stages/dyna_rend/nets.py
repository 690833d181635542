"""The shared encoder, the pre-training objectives and the downstream policy (torch).

Every arm has the same network: a per-camera 2-D CNN on the input RGB-D views (plus a visibility
channel), its feature maps back-projected into the voxel grid by the observed depth (``render.lift``),
a 3-D CNN conditioned on the instruction (FiLM), and a "future" 3-D block (FiLM again). The policy
reads [current, future] voxel features and scores every voxel (an action value map); the action is
the arg-max voxel. The arms differ only in how the weights start:

- ``none``: random.
- ``mae2d``: 2-D masked image modelling. The 2-D CNN with a 2-D head rebuilds the masked pixels
  of its own view. No 3-D lifting is trained (the 3-D parts stay random).
- ``vidpred2d``: 2-D video prediction. The 2-D CNN, FiLM-conditioned on the instruction, predicts
  its own view of the future scene.
- ``recon3d``: masked 3-D reconstruction by rendering (the ablation without the future term):
  the whole encoder decodes density and colour per voxel; the loss is on renders of the current
  scene from every camera, held-out viewpoints included.
- ``dynarend``: ``recon3d`` plus future prediction: the future block's features decode the scene
  after the instruction, rendered and compared with the future views.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .render import lift, render, voxel_index

ARMS = ("none", "mae2d", "vidpred2d", "recon3d", "dynarend")
# The density logit starts at -6 (alpha ~ 0.0025 everywhere). From alpha 0.5 or 0.12 the empty voxels'
# gradient outweighs the few occupied ones', every render collapses to "no blocks" and softplus's
# gradient then vanishes (calibration: occupancy recall 0 after 300 steps at -2 and 0, 1.0 at -6).
DENSITY_BIAS = -6.0


class Film(nn.Module):
    def __init__(self, n_instr: int, c: int):
        super().__init__()
        self.lin = nn.Linear(n_instr, 2 * c)

    def forward(self, h, instr):
        g, b = self.lin(instr).chunk(2, dim=1)
        shape = (h.shape[0], h.shape[1]) + (1,) * (h.dim() - 2)
        return h * (1 + g.view(shape)) + b.view(shape)


class Encoder(nn.Module):
    def __init__(self, grid, n_instr: int, c: int, in_cams):
        super().__init__()
        self.grid, self.in_cams = grid, tuple(in_cams)
        self.enc2d = nn.Sequential(nn.Conv2d(5, c, 3, padding=1), nn.ReLU(),
                                   nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
                                   nn.Conv2d(c, c, 3, padding=1))
        self.body1 = nn.Conv3d(c + 1, c, 3, padding=1)
        self.film1 = Film(n_instr, c)
        self.body2 = nn.Conv3d(c, c, 3, padding=1)
        self.fut1 = nn.Conv3d(c, c, 3, padding=1)
        self.film2 = Film(n_instr, c)
        self.fut2 = nn.Conv3d(c, c, 3, padding=1)

    def feats2d(self, views, visible):
        """Per-camera 2-D feature maps of (B, 4, W, H) views with (B, 1, W, H) visibility masks."""
        return [self.enc2d(torch.cat([v * m, m], dim=1)) for v, m in zip(views, visible)]

    def forward(self, views, visible, instr):
        """Current and future voxel features, (B, C, X, Y, Z) each."""
        g = self.grid
        f2 = self.feats2d(views, visible)
        idx = []
        for cam, v, m in zip(self.in_cams, views, visible):
            i = voxel_index(v[:, 3], cam, g.x, g.y, g.z)
            idx.append(torch.where(m.reshape(m.shape[0], -1) > 0, i, torch.full_like(i, g.n)))
        vox = lift(f2, idx, g.n).reshape(views[0].shape[0], -1, g.x, g.y, g.z)
        h = F.relu(self.film1(self.body1(vox), instr))
        cur = F.relu(self.body2(h)) + h
        fut = cur + self.fut2(F.relu(self.film2(self.fut1(cur), instr)))
        return cur, fut


class Model(nn.Module):
    """Encoder, voxel decoder (density, colour), 2-D heads and the policy head."""

    def __init__(self, grid, n_instr: int, c: int, in_cams):
        super().__init__()
        self.enc = Encoder(grid, n_instr, c, in_cams)
        self.dec3d = nn.Conv3d(c, 4, 1)
        with torch.no_grad():
            self.dec3d.bias[0].fill_(DENSITY_BIAS)
        self.head2d = nn.Conv2d(c, 4, 3, padding=1)
        self.film2d = Film(n_instr, c)
        self.policy = nn.Conv3d(2 * c, 1, 1)

    def decode(self, f):
        out = self.dec3d(f)
        alpha = 1 - torch.exp(-F.softplus(out[:, 0]))
        return alpha, torch.sigmoid(out[:, 1:])

    def logits(self, views, visible, instr):
        cur, fut = self.enc(views, visible, instr)
        return self.policy(torch.cat([cur, fut], dim=1)).flatten(1)


def instr_onehot(instr, n_colours: int):
    """(B, 2) colour ids of (A, B) -> (B, 2 * n_colours)."""
    return torch.cat([F.one_hot(instr[:, 0], n_colours), F.one_hot(instr[:, 1], n_colours)], dim=1).float()


def patch_mask(shape, patch: int, ratio: float, gen, device="cpu"):
    """(B, 1, W, H) visibility: 1 kept, 0 masked, in ``patch`` x ``patch`` blocks, each masked with
    probability ``ratio`` (drawn from the CPU generator ``gen``, then moved to ``device``)."""
    b, _, w, h = shape
    pw, ph = -(-w // patch), -(-h // patch)
    keep = (torch.rand(b, 1, pw, ph, generator=gen) >= ratio).float().to(device)
    return keep.repeat_interleave(patch, 2).repeat_interleave(patch, 3)[:, :, :w, :h]


def pretext_loss(model, arm: str, batch, cams_in, cams_all, mask_ratio: float, patch: int, gen):
    """The pre-training loss of ``arm`` on a batch (dict of tensors: ``views``/``views_f`` per camera,
    ``instr`` one-hot, ``table``)."""
    views = [batch["views"][c] for c in cams_in]
    vis = [patch_mask(v.shape, patch, mask_ratio, gen, v.device) for v in views]
    instr = batch["instr"]
    if arm == "mae2d":
        f2 = model.enc.feats2d(views, vis)
        loss = 0.0
        for f, v, m in zip(f2, views, vis):
            err = ((model.head2d(f) - v) ** 2).mean(1, keepdim=True)
            loss = loss + (err * (1 - m)).sum() / (1 - m).sum().clamp(min=1)
        return loss / len(views)
    if arm == "vidpred2d":
        f2 = model.enc.feats2d(views, vis)
        loss = 0.0
        for f, c in zip(f2, cams_in):
            pred = model.head2d(F.relu(model.film2d(f, instr)))
            loss = loss + ((pred - batch["views_f"][c]) ** 2).mean()
        return loss / len(views)
    if arm in ("recon3d", "dynarend"):
        cur, fut = model.enc(views, vis, instr)
        a, c = model.decode(cur)
        loss = sum(((render(a, c, batch["table"], cam) - batch["views"][cam]) ** 2).mean() for cam in cams_all)
        if arm == "dynarend":
            a, c = model.decode(fut)
            loss = loss + sum(((render(a, c, batch["table"], cam) - batch["views_f"][cam]) ** 2).mean()
                              for cam in cams_all)
        return loss / len(cams_all)
    raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")


def policy_loss(model, batch, cams_in):
    views = [batch["views"][c] for c in cams_in]
    vis = [torch.ones_like(v[:, :1]) for v in views]
    return F.cross_entropy(model.logits(views, vis, batch["instr"]), batch["target"])


@torch.no_grad()
def success(model, batch, cams_in, chunk: int = 256) -> float:
    """Fraction of scenes whose arg-max voxel is the target."""
    n = batch["target"].shape[0]
    hits = 0
    for s in range(0, n, chunk):
        views = [batch["views"][c][s:s + chunk] for c in cams_in]
        vis = [torch.ones_like(v[:, :1]) for v in views]
        pred = model.logits(views, vis, batch["instr"][s:s + chunk]).argmax(1)
        hits += int((pred == batch["target"][s:s + chunk]).sum())
    return hits / n


@torch.no_grad()
def future_mse(model, batch, cams_in, cams_eval, use_future: bool = True) -> float:
    """Mean squared error of the model's render of the future (or, ``use_future=False``, of the
    present: "nothing moves") against the true future views of ``cams_eval``, unmasked inputs."""
    views = [batch["views"][c] for c in cams_in]
    vis = [torch.ones_like(v[:, :1]) for v in views]
    cur, fut = model.enc(views, vis, batch["instr"])
    a, c = model.decode(fut if use_future else cur)
    return float(sum(((render(a, c, batch["table"], cam) - batch["views_f"][cam]) ** 2).mean()
                     for cam in cams_eval) / len(cams_eval))
