"""Views of a scene set, the pre-training and fine-tuning loops (torch)."""
from __future__ import annotations

import torch

from stages.common.optim import Adam

from .nets import N_DIRECTIONS, Model, instr_onehot, policy_loss, pretext_loss
from .render import render
from .world import PALETTE

N_COLOURS = len(PALETTE)
N_INSTR = 2 * N_COLOURS + N_DIRECTIONS


def stream_seed(seed: int, stream: int) -> int:
    """An integer seed for one random stream of a verdict seed (1: pre-training batches and masks,
    2: fine-tuning batches), from numpy's SeedSequence: streams of different seeds never coincide."""
    import numpy as np

    return int(np.random.SeedSequence([seed, stream]).generate_state(1, dtype=np.uint64)[0] >> 1)


def load_split(npz, name: str, seed: int | None = None) -> dict:
    """One split of scenes.npz (keys ``s<seed>/<split>__<array>``, or ``<split>__<array>`` with
    ``seed`` None) as world.make_set's dict."""
    pre = f"{name}__" if seed is None else f"s{seed}/{name}__"
    return {k[len(pre):]: npz[k] for k in npz.files if k.startswith(pre)}


@torch.no_grad()
def views_of(scenes, cams, device="cpu", chunk: int = 512) -> dict:
    """Exact RGB-D views (alpha in {0, 1}) of a scene set (world.make_set's arrays), current and
    future, for every camera of ``cams``, plus the one-hot instruction, targets and table colours."""
    occ = torch.as_tensor(scenes["occ"]).float()
    rgb = torch.as_tensor(scenes["rgb"]).permute(0, 4, 1, 2, 3)
    occ_f = torch.as_tensor(scenes["occ_f"]).float()
    rgb_f = torch.as_tensor(scenes["rgb_f"]).permute(0, 4, 1, 2, 3)
    table = torch.as_tensor(scenes["table"])
    out = {"views": {}, "views_f": {}}
    for c in cams:
        out["views"][c] = torch.cat([render(occ[s:s + chunk], rgb[s:s + chunk], table[s:s + chunk], c)
                                     for s in range(0, len(occ), chunk)])
        out["views_f"][c] = torch.cat([render(occ_f[s:s + chunk], rgb_f[s:s + chunk], table[s:s + chunk], c)
                                       for s in range(0, len(occ), chunk)])
    out["instr"] = instr_onehot(torch.as_tensor(scenes["instr"]), N_COLOURS)
    out["target"] = torch.as_tensor(scenes["target"])
    out["table"] = table
    return take(out, slice(None), device)


def take(batch: dict, idx, device=None) -> dict:
    """Rows ``idx`` of every tensor of a batch (and moved to ``device`` when given)."""
    out = {}
    for k, v in batch.items():
        if isinstance(v, dict):
            out[k] = {c: t[idx] if device is None else t[idx].to(device) for c, t in v.items()}
        else:
            out[k] = v[idx] if device is None else v[idx].to(device)
    return out


def new_model(grid, channels: int, cams_in, seed: int, device="cpu") -> Model:
    torch.manual_seed(seed)
    return Model(grid, N_INSTR, channels, cams_in).to(device)


def pretrain(model: Model, arm: str, data: dict, cams_in, cams_all, steps: int, batch: int, lr: float,
             mask_ratio: float, patch: int, seed: int, checkpoints=(), progress=None):
    """Pre-train ``model`` in place with ``arm``'s objective; returns the loss curve and the states
    at ``checkpoints`` (step counts)."""
    if arm == "none" or steps == 0:
        return [], {}
    gen = torch.Generator().manual_seed(seed)
    opt = Adam(model.parameters(), lr=lr)
    n = data["target"].shape[0]
    curve, saved = [], {}
    for step in range(1, steps + 1):
        idx = torch.randint(n, (batch,), generator=gen).to(data["target"].device)
        loss = pretext_loss(model, arm, take(data, idx), cams_in, cams_all, mask_ratio, patch, gen)
        opt.zero_grad()
        loss.backward()
        opt.step()
        curve.append(float(loss.detach()))
        if step in checkpoints:
            saved[step] = {k: v.clone() for k, v in model.state_dict().items()}
        if progress is not None:
            progress.update(1)
    return curve, saved


def finetune(model: Model, demos: dict, cams_in, steps: int, batch: int, lr: float, seed: int, progress=None):
    """Behaviour cloning of the place voxel on the demos (cross-entropy over the action value map)."""
    gen = torch.Generator().manual_seed(seed)
    opt = Adam(model.parameters(), lr=lr)
    n = demos["target"].shape[0]
    curve = []
    for _ in range(steps):
        idx = torch.randint(n, (min(batch, n),), generator=gen).to(demos["target"].device)
        loss = policy_loss(model, take(demos, idx), cams_in)
        opt.zero_grad()
        loss.backward()
        opt.step()
        curve.append(float(loss.detach()))
        if progress is not None:
            progress.update(1)
    return curve
