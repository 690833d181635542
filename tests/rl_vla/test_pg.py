"""rl_vla's policy-gradient core against answers worked out by hand (a 2-armed bandit, PPO's clip)."""
from __future__ import annotations

import math

import pytest
import torch

from stages.rl_vla.pg import clipped_surrogate, dpo_loss, group_advantages, sequence_logp


def test_group_advantages_by_hand():
    adv = group_advantages(torch.tensor([1.0, 0.0, 1.0, 0.0, 2.0, 2.0]), torch.tensor([0, 0, 0, 0, 1, 1]), eps=1e-8)
    # group 0: mean 0.5, std 0.5 -> +-1; group 1: all equal -> 0
    assert torch.allclose(adv, torch.tensor([1.0, -1.0, 1.0, -1.0, 0.0, 0.0]), atol=1e-6)


def test_clip_by_hand():
    lo = torch.log(torch.tensor([1.0]))
    up = torch.log(torch.tensor([1.5]))
    down = torch.log(torch.tensor([0.5]))
    assert clipped_surrogate(up, lo, torch.tensor([1.0]), 0.2).item() == pytest.approx(-1.2)   # clipped at 1 + eps
    assert clipped_surrogate(up, lo, torch.tensor([-1.0]), 0.2).item() == pytest.approx(1.5)   # pessimistic side
    assert clipped_surrogate(down, lo, torch.tensor([1.0]), 0.2).item() == pytest.approx(-0.5)
    assert clipped_surrogate(down, lo, torch.tensor([-1.0]), 0.2).item() == pytest.approx(0.8)


def test_bandit_gradient_is_the_policy_gradient():
    """Two arms, rewards 1 and 0, uniform softmax policy: at ratio 1 the clipped surrogate's
    gradient is mean(A grad log pi) = 0.5 on the good arm's logit, -0.5 on the other's."""
    theta = torch.zeros(2, requires_grad=True)
    actions = torch.tensor([0, 1])
    adv = group_advantages(torch.tensor([1.0, 0.0]), torch.tensor([0, 0]), eps=1e-8)
    logp = torch.log_softmax(theta, 0)[actions]
    clipped_surrogate(logp, logp.detach(), adv, 0.2).backward()
    assert torch.allclose(-theta.grad, torch.tensor([0.5, -0.5]), atol=1e-6)


def test_dpo_at_the_reference_and_its_gradient():
    lw = torch.tensor([-2.0], requires_grad=True)
    ll = torch.tensor([-3.0], requires_grad=True)
    loss = dpo_loss(lw, ll, lw.detach(), ll.detach(), beta=0.5)
    assert loss.item() == pytest.approx(math.log(2))
    loss.backward()
    assert lw.grad.item() == pytest.approx(-0.25) and ll.grad.item() == pytest.approx(0.25)   # -+beta/2


def test_sequence_logp_sums_each_episode():
    logits = torch.log(torch.tensor([[0.5, 0.5], [0.25, 0.75], [0.9, 0.1]]))
    out = sequence_logp(logits, torch.tensor([0, 1, 0]), torch.tensor([0, 0, 1]), 2)
    assert torch.allclose(out, torch.log(torch.tensor([0.5 * 0.75, 0.9])), atol=1e-6)


@pytest.mark.parametrize("call, message", [
    (lambda: group_advantages(torch.ones(3), torch.zeros(2)), "1-D of one length"),
    (lambda: group_advantages(torch.ones(2), torch.zeros(2), eps=0), "eps must be > 0"),
    (lambda: clipped_surrogate(torch.zeros(1), torch.zeros(1), torch.ones(1), 1.5), "clip must be in (0, 1)"),
    (lambda: dpo_loss(torch.zeros(1), torch.zeros(1), torch.zeros(1), torch.zeros(1), 0.0), "beta must be > 0"),
])
def test_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
