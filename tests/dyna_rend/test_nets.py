"""The objectives, the masks, the policy's success count and the saved policy's predict."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from stages.dyna_rend.loops import N_COLOURS, finetune, new_model, pretrain, views_of
from stages.dyna_rend.nets import ARMS, instr_onehot, patch_mask, pretext_loss, success
from stages.dyna_rend.render import CAMERAS
from stages.dyna_rend.world import Grid, make_set

G = Grid(6, 6, 3)
IN = ("x+", "y+")


@pytest.fixture(scope="module")
def data():
    return views_of(make_set(np.random.SeedSequence(1), 12, G, 3, 0.3), CAMERAS)


def test_patch_mask_ratio_and_blocks():
    gen = torch.Generator().manual_seed(0)
    assert patch_mask((2, 4, 9, 6), 2, 0.0, gen).min().item() == 1.0
    m = patch_mask((200, 4, 8, 8), 2, 0.5, gen)
    assert m.shape == (200, 1, 8, 8) and abs(m.mean().item() - 0.5) < 0.03
    assert torch.equal(m[:, :, ::2, ::2], m[:, :, 1::2, 1::2])           # 2 x 2 blocks


def test_instruction_one_hot():
    oh = instr_onehot(torch.tensor([[0, 4], [2, 1]]), N_COLOURS)
    assert oh.shape == (2, 14) and oh[0].nonzero().flatten().tolist() == [0, 9]
    oh = instr_onehot(torch.tensor([[0, 4, -1], [3, -1, 2]]), N_COLOURS)           # stack, push
    assert oh[0].nonzero().flatten().tolist() == [0, 9] and oh[1].nonzero().flatten().tolist() == [3, 12]


def test_every_arm_lowers_its_loss(data):
    gen = torch.Generator().manual_seed(0)
    for arm in ARMS[1:]:
        m = new_model(G, 4, IN, 0)
        before = pretext_loss(m, arm, data, IN, CAMERAS, 0.5, 2, torch.Generator().manual_seed(1)).item()
        pretrain(m, arm, data, IN, CAMERAS, 15, 12, 0.01, 0.5, 2, 0)
        after = pretext_loss(m, arm, data, IN, CAMERAS, 0.5, 2, torch.Generator().manual_seed(1)).item()
        assert np.isfinite(after) and after < before, arm
    with pytest.raises(ValueError, match="arm must be one of"):
        pretext_loss(new_model(G, 4, IN, 0), "mae3d", data, IN, CAMERAS, 0.5, 2, gen)


def test_blind_arm_renders_against_another_scenes_targets(data):
    """dynarend_blind's loss is dynarend's with every target rolled by one scene of the batch."""
    m = new_model(G, 4, IN, 0)
    rolled = {k: ({c: t.roll(1, 0) for c, t in v.items()} if isinstance(v, dict) else v.roll(1, 0))
              for k, v in data.items()}
    rolled["views"] = {c: (data["views"][c] if c in IN else rolled["views"][c]) for c in CAMERAS}
    blind = pretext_loss(m, "dynarend_blind", data, IN, CAMERAS, 0.0, 2, torch.Generator().manual_seed(1))
    # the same loss by hand: inputs from the scene itself, targets (the held-out and input views) from the next
    from stages.dyna_rend.render import render
    views = [data["views"][c] for c in IN]
    cur, fut, _ = m.enc(views, [torch.ones_like(v[:, :1]) for v in views], data["instr"])
    want = 0.0
    for f, key in ((cur, "views"), (fut, "views_f")):
        a, col = m.decode(f)
        want = want + sum(((render(a, col, data["table"].roll(1, 0), cam) - data[key][cam].roll(1, 0)) ** 2).mean()
                          for cam in CAMERAS)
    assert blind.item() == pytest.approx(want.item() / len(CAMERAS), rel=1e-5)
    own = pretext_loss(m, "dynarend", data, IN, CAMERAS, 0.0, 2, torch.Generator().manual_seed(1)).item()
    assert abs(blind.item() - own) > 1e-7         # an untrained model renders almost only the table: close, not equal


def test_policy_reads_the_lifted_2d_future_map(data):
    """The 2-D arms' future map reaches the policy: changing film2d changes the logits."""
    m = new_model(G, 4, IN, 0)
    views = [data["views"][c] for c in IN]
    vis = [torch.ones_like(v[:, :1]) for v in views]
    with torch.no_grad():
        before = m.logits(views, vis, data["instr"]).clone()
        m.enc.film2d.lin.bias.add_(1.0)
        assert not torch.allclose(before, m.logits(views, vis, data["instr"]))


def test_success_counts_argmax_hits(data):
    m = new_model(G, 4, IN, 0)
    finetune(m, data, IN, 60, 12, 0.02, 0)          # memorises 12 demos
    views = [data["views"][c] for c in IN]
    vis = [torch.ones_like(v[:, :1]) for v in views]
    with torch.no_grad():
        hits = (m.logits(views, vis, data["instr"]).argmax(1) == data["target"]).float().mean().item()
    assert success(m, data, IN, chunk=5) == pytest.approx(hits) and hits > 0.5


def test_policy_predict_matches_the_model(tmp_path, data):
    import json

    from stages.dyna_rend.pyfunc_io import load_policy, predict_place

    m = new_model(G, 4, IN, 0)
    torch.save(m.state_dict(), tmp_path / "w.pt")
    (tmp_path / "c.json").write_text(json.dumps({"grid": [G.x, G.y, G.z], "channels": 4, "cams_in": list(IN)}))
    model, cfg = load_policy(str(tmp_path / "w.pt"), str(tmp_path / "c.json"))
    frame = pd.DataFrame({f"view_{c}": [v.flatten().tolist() for v in data["views"][c][:3]] for c in IN})
    frame["a"], frame["b"] = [int(i) for i in data["instr"][:3, :5].argmax(1)], [int(i) for i in data["instr"][:3, 5:10].argmax(1)]
    got = predict_place(model, cfg, frame)
    with torch.no_grad():
        flat = m.logits([data["views"][c][:3] for c in IN], [torch.ones(3, 1, *data["views"][c].shape[2:]) for c in IN],
                        data["instr"][:3]).argmax(1)
    assert got == [list(np.unravel_index(int(i), (G.x, G.y, G.z))) for i in flat]
    with pytest.raises(ValueError, match="missing"):
        predict_place(model, cfg, frame.drop(columns=["a"]))
