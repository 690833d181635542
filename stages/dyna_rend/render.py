"""Differentiable volume rendering of a voxel grid from oblique parallel cameras, and the
back-projection of RGB-D pixels (or 2-D feature maps) into the grid (torch).

Cameras: ``top`` looks straight down; ``x+``, ``x-``, ``y+``, ``y-`` look down at 45 degrees, so that
layer z of the grid appears shifted by ``z`` (or ``Z - 1 - z``) pixels along x (or y): the ray of
pixel (u, v) of camera ``x+`` meets voxel (u - z, v, z) in layer z. A ray is composited front to back
from the top layer down (alpha compositing, the discrete form of volume rendering): weight
w_k = T_k a_k, T_k = prod_{j<k} (1 - a_j); colour sum_k w_k c_k + T_Z * table; depth (in layers
from the top, divided by Z) sum_k w_k k / Z + T_Z. With alpha in {0, 1} it renders the exact view,
which is how the data's views are made.
"""
from __future__ import annotations

CAMERAS = ("top", "x+", "x-", "y+", "y-")


def _offset(cam: str, z: int, nz: int) -> int:
    return z if cam.endswith("+") else nz - 1 - z


def image_shape(cam: str, nx: int, ny: int, nz: int) -> tuple[int, int]:
    if cam == "top":
        return nx, ny
    if cam[0] == "x":
        return nx + nz - 1, ny
    return nx, ny + nz - 1


def _layer(t, cam: str, z: int, nz: int):
    """Layer z of ``t`` (B, C, X, Y, Z) placed in the camera's image plane: (B, C, W, H)."""
    import torch.nn.functional as F

    lay = t[..., z]
    if cam == "top":
        return lay
    off = _offset(cam, z, nz)
    pad = (0, 0, off, nz - 1 - off) if cam[0] == "x" else (off, nz - 1 - off, 0, 0)
    return F.pad(lay, pad)


def render(alpha, rgb, table, cam: str):
    """Render (B, X, Y, Z) alphas in [0, 1] and (B, 3, X, Y, Z) colours over a table colour (B, 3)
    from camera ``cam``: (B, 4, W, H), channels r, g, b, depth / Z."""
    import torch

    if cam not in CAMERAS:
        raise ValueError(f"camera must be one of {CAMERAS}, got {cam!r}")
    nz = alpha.shape[-1]
    trans, col, depth = None, 0.0, 0.0
    for k, z in enumerate(range(nz - 1, -1, -1)):
        a = _layer(alpha[:, None], cam, z, nz)
        c = _layer(rgb, cam, z, nz)
        w = a if trans is None else trans * a
        col = col + w * c
        depth = depth + w * (k / nz)
        trans = (1 - a) if trans is None else trans * (1 - a)
    col = col + trans * table[:, :, None, None]
    depth = depth + trans
    return torch.cat([col, depth], dim=1)


def render_all(alpha, rgb, table, cams):
    return {c: render(alpha, rgb, table, c) for c in cams}


def voxel_index(depth, cam: str, nx: int, ny: int, nz: int):
    """The flat voxel index each pixel's depth (B, W, H; depth / Z as rendered) lands in, or
    ``nx * ny * nz`` (a dummy slot) where the ray reaches the table: (B, W * H)."""
    import torch

    b, w, h = depth.shape
    k = torch.round(depth * nz).long()
    hit = k < nz
    z = (nz - 1 - k).clamp(0, nz - 1)
    u = torch.arange(w, device=depth.device).view(1, w, 1).expand(b, w, h)
    v = torch.arange(h, device=depth.device).view(1, 1, h).expand(b, w, h)
    if cam == "top":
        x, y = u, v
    else:
        off = z if cam.endswith("+") else nz - 1 - z
        x, y = (u - off, v) if cam[0] == "x" else (u, v - off)
    inside = hit & (x >= 0) & (x < nx) & (y >= 0) & (y < ny)
    flat = (x.clamp(0, nx - 1) * ny + y.clamp(0, ny - 1)) * nz + z
    return torch.where(inside, flat, torch.full_like(flat, nx * ny * nz)).reshape(b, w * h)


def lift(feats, indices, n: int):
    """Back-project pixel features into the grid: ``feats`` a list of (B, C, W, H) maps, ``indices``
    the matching (B, W * H) voxel indices (``n`` = dummy). Returns (B, C + 1, n): the mean feature
    of the pixels landing in each voxel, and a last channel that is 1 where any pixel landed."""
    import torch

    b, c = feats[0].shape[:2]
    acc = feats[0].new_zeros(b, c, n + 1)
    cnt = feats[0].new_zeros(b, 1, n + 1)
    for f, idx in zip(feats, indices):
        flat = f.reshape(b, c, -1)
        acc = acc.scatter_add(2, idx[:, None].expand(b, c, idx.shape[1]), flat)
        cnt = cnt.scatter_add(2, idx[:, None], torch.ones_like(flat[:, :1]))
    mean = acc[..., :n] / cnt[..., :n].clamp(min=1)
    return torch.cat([mean, (cnt[..., :n] > 0).to(mean.dtype)], dim=1)
