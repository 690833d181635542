"""stages.common.optim.Adam against torch.optim.Adam: the same weights, bit for bit."""
from __future__ import annotations

import pytest
import torch

from stages.common.optim import Adam


def _train(make_opt, weight_decay: float, drop_grad_at: int | None = None):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    net[2].bias.requires_grad_(False)                    # a frozen parameter: not optimised
    opt = make_opt(net.parameters(), weight_decay)
    g = torch.Generator().manual_seed(1)
    for step in range(40):
        x = torch.randn(32, 6, generator=g)
        y = torch.randn(32, 2, generator=g)
        opt.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        if step == drop_grad_at:
            net[0].bias.grad = None                      # skipped this step; its bias correction lags
        opt.step()
    return [p.detach().clone() for p in net.parameters()]


@pytest.mark.parametrize("weight_decay, drop", [(0.0, None), (1e-3, None), (0.0, 5), (1e-2, 7)])
def test_bit_identical_to_torch(weight_decay, drop):
    ours = _train(lambda ps, wd: Adam(ps, lr=0.01, weight_decay=wd), weight_decay, drop)
    ref = _train(lambda ps, wd: torch.optim.Adam(ps, lr=0.01, weight_decay=wd), weight_decay, drop)
    assert all(torch.equal(a, b) for a, b in zip(ours, ref))


def test_first_step_by_hand():
    # step 1 with bias correction: m_hat = g, v_hat = g^2, so the update is lr * g / (|g| + eps)
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.0]))
    opt = Adam([p], lr=0.1)
    p.grad = torch.tensor([0.5, -4.0, 0.0])
    opt.step()
    assert torch.allclose(p.detach(), torch.tensor([1.0 - 0.1, -2.0 + 0.1, 0.0]), atol=1e-6)


def test_bad_inputs_are_named():
    p = torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(ValueError, match="lr must be > 0"):
        Adam([p], lr=0.0)
    with pytest.raises(ValueError, match=r"betas must be in \[0, 1\)"):
        Adam([p], lr=0.1, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="eps and weight_decay must be >= 0"):
        Adam([p], lr=0.1, weight_decay=-1.0)
    with pytest.raises(ValueError, match="no parameter requires a gradient"):
        Adam([torch.zeros(2)], lr=0.1)
