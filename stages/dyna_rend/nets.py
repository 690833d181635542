"""The shared encoder, the pre-training objectives and the downstream policy (torch).

Every arm has the same network: a per-camera 2-D CNN on the input RGB-D views (plus a visibility
channel) and a 2-D "future" map of it (FiLM-conditioned on the instruction); both feature maps are
back-projected into the voxel grid by the observed depth (``render.lift``); a 3-D CNN conditioned on
the instruction (FiLM) gives the current voxel features, and a "future" 3-D block (FiLM again) the
future ones. The policy reads [current 3-D, future 3-D, lifted current 2-D, lifted future 2-D]
features and scores every voxel (an action value map); the action is the arg-max voxel. So every
arm hands the policy the features it pre-trained, current and future where it has them. The arms
differ only in how the weights start:

- ``none``: random.
- ``mae2d``: 2-D masked image modelling. The 2-D CNN with a 2-D head rebuilds the masked pixels
  of its own view. No 3-D lifting is trained (the 3-D parts stay random).
- ``vidpred2d``: 2-D video prediction. The 2-D CNN and its FiLM-conditioned future map predict the
  camera's own view of the future scene (through the 2-D head).
- ``recon3d``: masked 3-D reconstruction by rendering (the ablation without the future term):
  the whole encoder decodes density and colour per voxel; the loss is on renders of the current
  scene from every camera, held-out viewpoints included.
- ``dynarend``: ``recon3d`` plus future prediction: the future block's features decode the scene
  after the instruction, rendered and compared with the future views.
- ``dynarend_blind`` (the control): ``dynarend``'s network, objective and steps, but every render
  target (present and future views, table) is another scene's of the batch: the pretext carries no
  information about the input, so what it adds is the optimisation, not the scenes.

The pre-training scenes are ``push`` scenes (stages/dyna_rend/world.py): their future never holds
the stacking task's label.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .render import lift, render, voxel_index

ARMS = ("none", "mae2d", "vidpred2d", "recon3d", "dynarend", "dynarend_blind")
RENDER_ARMS = ("recon3d", "dynarend", "dynarend_blind")
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
        self.film2d = Film(n_instr, c)
        self.body1 = nn.Conv3d(2 * c + 1, c, 3, padding=1)
        self.film1 = Film(n_instr, c)
        self.body2 = nn.Conv3d(c, c, 3, padding=1)
        self.fut1 = nn.Conv3d(c, c, 3, padding=1)
        self.film2 = Film(n_instr, c)
        self.fut2 = nn.Conv3d(c, c, 3, padding=1)

    def feats2d(self, views, visible):
        """Per-camera 2-D feature maps of (B, 4, W, H) views with (B, 1, W, H) visibility masks."""
        return [self.enc2d(torch.cat([v * m, m], dim=1)) for v, m in zip(views, visible)]

    def future2d(self, f2, instr):
        """The 2-D future map of each camera's feature map (what vidpred2d's head decodes)."""
        return [F.relu(self.film2d(f, instr)) for f in f2]

    def forward(self, views, visible, instr):
        """Current and future voxel features, (B, C, X, Y, Z) each, and the lifted 2-D features
        (current and future maps and the hit channel: B, 2C + 1, X, Y, Z)."""
        g = self.grid
        f2 = self.feats2d(views, visible)
        f2 = [torch.cat([f, u], dim=1) for f, u in zip(f2, self.future2d(f2, instr))]
        idx = []
        for cam, v, m in zip(self.in_cams, views, visible):
            i = voxel_index(v[:, 3], cam, g.x, g.y, g.z)
            idx.append(torch.where(m.reshape(m.shape[0], -1) > 0, i, torch.full_like(i, g.n)))
        vox = lift(f2, idx, g.n).reshape(views[0].shape[0], -1, g.x, g.y, g.z)
        h = F.relu(self.film1(self.body1(vox), instr))
        cur = F.relu(self.body2(h)) + h
        fut = cur + self.fut2(F.relu(self.film2(self.fut1(cur), instr)))
        return cur, fut, vox


class Model(nn.Module):
    """Encoder, voxel decoder (density, colour), 2-D heads and the policy head."""

    def __init__(self, grid, n_instr: int, c: int, in_cams):
        super().__init__()
        self.enc = Encoder(grid, n_instr, c, in_cams)
        self.dec3d = nn.Conv3d(c, 4, 1)
        with torch.no_grad():
            self.dec3d.bias[0].fill_(DENSITY_BIAS)
        self.head2d = nn.Conv2d(c, 4, 3, padding=1)
        self.policy = nn.Conv3d(4 * c + 1, 1, 1)

    def decode(self, f):
        out = self.dec3d(f)
        alpha = 1 - torch.exp(-F.softplus(out[:, 0]))
        return alpha, torch.sigmoid(out[:, 1:])

    def logits(self, views, visible, instr):
        cur, fut, vox = self.enc(views, visible, instr)
        return self.policy(torch.cat([cur, fut, vox], dim=1)).flatten(1)


N_DIRECTIONS = 4


def instr_onehot(instr, n_colours: int):
    """(B, 2) colour ids (A, B) of "put A on B", or (B, 3) instructions (A, B, d) with -1 where a
    slot is unused ("push A towards d": B = -1; stack: d = -1) -> (B, 2 * n_colours + 4) one-hot
    slots, all zero where unused."""
    sizes = (n_colours, n_colours, N_DIRECTIONS)
    parts = []
    for k, size in enumerate(sizes):
        col = instr[:, k] if k < instr.shape[1] else torch.full_like(instr[:, 0], -1)
        parts.append(F.one_hot(col.clamp(min=0), size) * (col >= 0)[:, None])
    return torch.cat(parts, dim=1).float()


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
        f2 = model.enc.future2d(model.enc.feats2d(views, vis), instr)
        loss = 0.0
        for f, c in zip(f2, cams_in):
            loss = loss + ((model.head2d(f) - batch["views_f"][c]) ** 2).mean()
        return loss / len(views)
    if arm in RENDER_ARMS:
        cur, fut, _ = model.enc(views, vis, instr)
        tgt = batch
        if arm == "dynarend_blind":      # every target is the next scene's of the batch
            tgt = {k: ({c: t.roll(1, 0) for c, t in v.items()} if isinstance(v, dict) else v.roll(1, 0))
                   for k, v in batch.items()}
        a, c = model.decode(cur)
        loss = sum(((render(a, c, tgt["table"], cam) - tgt["views"][cam]) ** 2).mean() for cam in cams_all)
        if arm != "recon3d":
            a, c = model.decode(fut)
            loss = loss + sum(((render(a, c, tgt["table"], cam) - tgt["views_f"][cam]) ** 2).mean()
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
    cur, fut, _ = model.enc(views, vis, batch["instr"])
    a, c = model.decode(fut if use_future else cur)
    return float(sum(((render(a, c, batch["table"], cam) - batch["views_f"][cam]) ** 2).mean()
                     for cam in cams_eval) / len(cams_eval))
