"""The renderer and the back-projection against tiny cases worked by hand."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.dyna_rend.render import image_shape, lift, render, voxel_index

RED, BLUE, GREY = [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.5]


def scene(voxels, n=(3, 3, 3), alpha=1.0):
    """One-scene batch: alpha (1, X, Y, Z), rgb (1, 3, X, Y, Z), table (1, 3)."""
    a = torch.zeros(1, *n)
    c = torch.zeros(1, 3, *n)
    for (x, y, z), col in voxels:
        a[0, x, y, z] = alpha
        c[0, :, x, y, z] = torch.tensor(col)
    return a, c, torch.tensor([GREY])


def test_single_voxel_by_hand():
    a, c, t = scene([((1, 2, 0), RED)])
    top = render(a, c, t, "top")[0]
    assert top.shape == (4, 3, 3)
    assert top[:3, 1, 2].tolist() == RED and top[3, 1, 2].item() == pytest.approx(2 / 3)   # 2 empty layers above
    assert top[:3, 0, 0].tolist() == GREY and top[3, 0, 0].item() == 1.0                   # the table
    xp = render(a, c, t, "x+")[0]      # layer z shifted by z along x: z = 0 stays at u = 1
    xm = render(a, c, t, "x-")[0]      # shifted by Z - 1 - z = 2: u = 3
    assert xp.shape == (4, 5, 3) and xp[:3, 1, 2].tolist() == RED and xm[:3, 3, 2].tolist() == RED
    ym = render(a, c, t, "y-")[0]
    assert ym.shape == (4, 3, 5) and ym[:3, 1, 4].tolist() == RED
    assert [image_shape(k, 3, 3, 3) for k in ("top", "x+", "y-")] == [(3, 3), (5, 3), (3, 5)]


def test_stack_occludes_from_above_and_not_from_the_side():
    a, c, t = scene([((1, 1, 0), RED), ((1, 1, 1), BLUE)])
    top = render(a, c, t, "top")[0]
    assert top[:3, 1, 1].tolist() == BLUE and top[3, 1, 1].item() == pytest.approx(1 / 3)
    xp = render(a, c, t, "x+")[0]      # z = 1 at u = 2, z = 0 at u = 1: both visible
    assert xp[:3, 2, 1].tolist() == BLUE and xp[:3, 1, 1].tolist() == RED


def test_half_transparent_voxel_blends_with_the_table():
    a, c, t = scene([((0, 0, 2), RED)], alpha=0.5)
    top = render(a, c, t, "top")[0]
    assert top[:3, 0, 0].tolist() == pytest.approx([0.5 * 1 + 0.5 * 0.5, 0.25, 0.25])
    assert top[3, 0, 0].item() == pytest.approx(0.5 * 0 + 0.5 * 1.0)


def test_gradient_of_colour_wrt_alpha_is_colour_minus_table():
    a, c, t = scene([((0, 0, 2), RED)], alpha=0.3)
    a.requires_grad_(True)
    render(a, c, t, "top")[0, 0, 0, 0].backward()
    assert a.grad[0, 0, 0, 2].item() == pytest.approx(1.0 - 0.5)


def test_back_projection_recovers_visible_voxels():
    from stages.dyna_rend.world import Grid, make_set

    g = Grid(6, 6, 4)
    s = make_set(np.random.SeedSequence(3), 3, g, 4, 0.5)
    occ = torch.as_tensor(s["occ"]).float()
    rgb = torch.as_tensor(s["rgb"]).permute(0, 4, 1, 2, 3)
    for cam in ("top", "x+", "x-", "y+", "y-"):
        im = render(occ, rgb, torch.as_tensor(s["table"]), cam)
        idx = voxel_index(im[:, 3], cam, g.x, g.y, g.z)
        vox = lift([im[:, :3]], [idx], g.n)
        seen = vox[:, 3] > 0
        assert bool((occ.reshape(3, -1)[seen] == 1).all())
        assert torch.allclose(vox[:, :3].permute(0, 2, 1)[seen], rgb.reshape(3, 3, -1).permute(0, 2, 1)[seen])
    assert int(seen.sum()) >= 1


def test_lift_averages_pixels_that_land_in_one_voxel():
    f = torch.tensor([[[[1.0, 3.0]]]])            # (B=1, C=1, W=1, H=2)
    out = lift([f], [torch.tensor([[0, 0]])], 2)  # both pixels land in voxel 0
    assert out[0, 0].tolist() == [2.0, 0.0] and out[0, 1].tolist() == [1.0, 0.0]


def test_unknown_camera():
    a, c, t = scene([])
    with pytest.raises(ValueError, match="camera must be one of"):
        render(a, c, t, "side")
