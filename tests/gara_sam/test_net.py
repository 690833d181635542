"""gara_sam's maths against known answers: the gated adapter with its gate forced open is peft's LoRA
(the baseline library) for the same weights; with gates switched off it is the LoRA of the remaining
rank-1 components; IoU agrees with scikit-learn's Jaccard score; bad inputs fail by their message."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from stages.gara_sam.net import (ADAPTED, GatedLoRAConv2d, UNet, get_module, add_gated, build_arm, iou_per_image,
                                 load_arrays, peft_lora, predict, state_arrays, train_loop)


def _unet(seed=0):
    torch.manual_seed(seed)
    return UNet(8).eval()


def test_gate_open_equals_peft_lora():
    base = _unet()
    ours, theirs = copy.deepcopy(base), copy.deepcopy(base)
    gated = add_gated(ours, 4, 8.0, "open")
    pm = peft_lora(theirs, 4, 8.0)
    torch.manual_seed(1)
    for name, g in zip(ADAPTED, gated):
        torch.nn.init.normal_(g.lora_B.weight)             # a non-zero update (B starts at zero)
        layer = get_module(pm.base_model.model, name)
        layer.lora_A["default"].weight.data.copy_(g.lora_A.weight)
        layer.lora_B["default"].weight.data.copy_(g.lora_B.weight)
    x = torch.rand(4, 3, 32, 32)
    ours.eval(), pm.eval()
    with torch.no_grad():
        a, b, c = ours(x), pm(x), base(x)
    assert (a - c).abs().max() > 1e-2                     # the adapters change the output ...
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)  # ... exactly as peft's LoRA does
    merged = pm.merge_and_unload()                          # and the merged baseline (as train saves it)
    torch.testing.assert_close(merged(x), a, rtol=1e-4, atol=1e-5)


def test_closed_gates_keep_only_their_rank_one_components():
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 5, 3, padding=1)
    layer = GatedLoRAConv2d(conv, 4, 4.0, "gumbel").eval()
    torch.nn.init.normal_(layer.lora_B.weight)
    with torch.no_grad():
        layer.gate.weight.zero_()
        layer.gate.bias.copy_(torch.tensor([5.0, -5.0, 5.0, -5.0]))     # components 0 and 2 on
    x = torch.rand(2, 3, 8, 8)
    with torch.no_grad():
        out = layer(x)
        a, b = layer.lora_A.weight, layer.lora_B.weight                  # (4, 3, 3, 3), (5, 4, 1, 1)
        by_hand = conv(x) + sum(layer.scaling * torch.nn.functional.conv2d(
            torch.nn.functional.conv2d(x, a[i:i + 1], padding=1), b[:, i:i + 1]) for i in (0, 2))
    torch.testing.assert_close(out, by_hand, rtol=1e-5, atol=1e-6)
    assert layer.last_gate.sum(1).tolist() == [2.0, 2.0]


def test_effective_rank_follows_the_gate_and_the_constant_gate_ignores_the_input():
    model, gated = build_arm("gara", 8, 4, 4.0)
    const, cg = build_arm("gara_const", 8, 4, 4.0)
    with torch.no_grad():
        for g, c in zip(gated, cg):
            g.gate.weight.zero_()
            g.gate.bias.copy_(torch.tensor([-5.0, 5.0, -5.0, -5.0]))      # one component on
            c.gate.weight.normal_()
            c.gate.bias.copy_(torch.tensor([1.0, -1.0, 1.0, -1.0]))
        gated[0].gate.weight[0, 0] = 50.0        # first layer: component 0 on too when the red mean > 0.5
        gated[0].gate.bias[0] = -25.0
    dark, bright = torch.full((3, 3, 16, 16), 0.05), torch.full((3, 3, 16, 16), 0.95)
    # the first layer sees the raw image: mean 0.05 -> logit -22.5, 0.95 -> +22.5
    _, r_dark = predict(model, dark, gated=gated)
    _, r_bright = predict(model, bright, gated=gated)
    np.testing.assert_allclose(r_dark, [1.0] * 3)
    np.testing.assert_allclose(r_bright, [7 / 6] * 3)
    _, c_dark = predict(const, dark, gated=cg)
    _, c_bright = predict(const, bright, gated=cg)
    assert c_dark.tolist() == c_bright.tolist() == [2.0] * 3


def test_straight_through_gate_gets_gradients_and_penalty_closes_gates():
    torch.manual_seed(0)
    model, gated = build_arm("gara", 8, 4, 4.0)
    x, y = torch.rand(16, 3, 16, 16), (torch.rand(16, 1, 16, 16) > 0.5).float()
    model.train()
    torch.nn.init.normal_(gated[0].lora_B.weight, 0, 0.1)
    out = model(x)
    out.sum().backward()
    assert gated[0].gate.bias.grad is not None and gated[0].gate.bias.grad.abs().sum() > 0
    model.zero_grad()
    params = [q for q in model.parameters() if q.requires_grad]
    train_loop(model, params, x, y, 30, 8, 0.05, torch.Generator().manual_seed(0), lam=50.0, gated=gated,
               progress=False)
    _, rank = predict(model, x, gated=gated)
    assert rank.mean() < 1.0                                # a large rank penalty switches components off


def test_iou_matches_sklearn_jaccard():
    from sklearn.metrics import jaccard_score

    rng = np.random.default_rng(0)
    p, m = rng.random((6, 1, 8, 8)) > 0.5, rng.random((6, 1, 8, 8)) > 0.6
    ours = iou_per_image(p, m)
    ref = [jaccard_score(m[i].ravel(), p[i].ravel()) for i in range(6)]
    np.testing.assert_allclose(ours, ref)
    assert iou_per_image(np.zeros((1, 4)), np.zeros((1, 4))).tolist() == [1.0]     # both empty: a match


def test_state_arrays_round_trip():
    model, gated = build_arm("gara", 8, 2, 2.0)
    arrays = state_arrays(model, "gara")
    other, _ = build_arm("gara", 8, 2, 2.0)
    load_arrays(other, arrays, "gara")
    x = torch.rand(2, 3, 16, 16)
    torch.testing.assert_close(other(x), model.eval()(x))
    with pytest.raises(KeyError, match="no weights saved for arm 'lora'"):
        load_arrays(other, arrays, "lora")


def test_bad_inputs_fail_by_their_message():
    conv = torch.nn.Conv2d(3, 4, 3, padding=1)
    with pytest.raises(ValueError, match="rank r must be >= 1"):
        GatedLoRAConv2d(conv, 0, 1.0)
    with pytest.raises(ValueError, match="gate_mode must be one of"):
        GatedLoRAConv2d(conv, 2, 1.0, gate_mode="soft")
    with pytest.raises(ValueError, match="unknown arm 'adalora'"):
        build_arm("adalora", 8, 2, 2.0)
