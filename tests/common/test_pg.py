"""The shared policy-gradient core against answers worked out by hand or in closed form: GRPO's
group advantages, PPO's clip, the k3 KL estimator's exact expectation, DPO at the reference, and a
3-armed bandit that GRPO must solve."""
from __future__ import annotations

import math

import pytest
import torch

from stages.common.optim import Adam
from stages.common.pg import (clipped_surrogate, dpo_loss, group_advantages, kl_k3, masked_mean,
                              sequence_logp, token_logp)


def test_group_advantages_by_hand():
    adv = group_advantages(torch.tensor([1.0, 0.0, 1.0, 0.0, 2.0, 2.0]), torch.tensor([0, 0, 0, 0, 1, 1]), eps=1e-8)
    # group 0: mean 0.5, std 0.5 -> +-1; group 1: all equal -> 0
    assert torch.allclose(adv, torch.tensor([1.0, -1.0, 1.0, -1.0, 0.0, 0.0]), atol=1e-6)
    centred = group_advantages(torch.tensor([3.0, 1.0, 5.0, 5.0]), torch.tensor([0, 0, 1, 1]), scale=False)
    assert torch.equal(centred, torch.tensor([1.0, -1.0, 0.0, 0.0]))


def test_clip_by_hand():
    lo = torch.log(torch.tensor([1.0]))
    up = torch.log(torch.tensor([1.5]))
    down = torch.log(torch.tensor([0.5]))
    assert clipped_surrogate(up, lo, torch.tensor([1.0]), 0.2).item() == pytest.approx(-1.2)   # clipped at 1 + eps
    assert clipped_surrogate(up, lo, torch.tensor([-1.0]), 0.2).item() == pytest.approx(1.5)   # pessimistic side
    assert clipped_surrogate(down, lo, torch.tensor([1.0]), 0.2).item() == pytest.approx(-0.5)
    assert clipped_surrogate(down, lo, torch.tensor([-1.0]), 0.2).item() == pytest.approx(0.8)
    assert clipped_surrogate(up, lo, torch.tensor([1.0]), 0.2, clip_high=0.28).item() == pytest.approx(-1.28)


def test_token_level_surrogate_masks_and_broadcasts():
    """Two sequences, advantages +1 and -1, ratio 1 everywhere: the loss is minus the mean advantage
    over the valid tokens, (3 * 1 + 1 * -1) / 4 -> -0.5; padding does not count."""
    logp = torch.zeros(2, 3)
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]], dtype=torch.bool)
    assert clipped_surrogate(logp, logp, torch.tensor([1.0, -1.0]), 0.2, mask=mask).item() == pytest.approx(-0.5)


def test_bandit_gradient_is_the_policy_gradient():
    """Two arms, rewards 1 and 0, uniform softmax policy: at ratio 1 the clipped surrogate's
    gradient is mean(A grad log pi) = 0.5 on the good arm's logit, -0.5 on the other's."""
    theta = torch.zeros(2, requires_grad=True)
    actions = torch.tensor([0, 1])
    adv = group_advantages(torch.tensor([1.0, 0.0]), torch.tensor([0, 0]), eps=1e-8)
    logp = torch.log_softmax(theta, 0)[actions]
    clipped_surrogate(logp, logp.detach(), adv, 0.2).backward()
    assert torch.allclose(-theta.grad, torch.tensor([0.5, -0.5]), atol=1e-6)


def test_kl_k3_expectation_is_the_exact_kl():
    """E_p[k3] = KL(p || q) exactly, since E_p[q/p] = 1: weight each outcome by p instead of sampling."""
    p = torch.tensor([0.5, 0.3, 0.2])
    q = torch.tensor([0.2, 0.2, 0.6])
    k3 = torch.exp(torch.log(q) - torch.log(p)) - (torch.log(q) - torch.log(p)) - 1
    assert (p * k3).sum().item() == pytest.approx((p * torch.log(p / q)).sum().item(), rel=1e-6)
    assert kl_k3(torch.log(p), torch.log(p)).item() == 0.0
    assert (kl_k3(torch.log(p[:, None]), torch.log(q[:, None]), mask=torch.ones(3, 1)) >= 0).all()


def test_grpo_solves_a_three_armed_bandit():
    """Arms pay 0.2, 1.0 and 0.5 plus noise; 150 GRPO steps of 16 pulls move almost all the
    probability to arm 1 (the known optimum)."""
    gen = torch.Generator().manual_seed(0)
    theta = torch.zeros(3, requires_grad=True)
    opt = Adam([theta], lr=0.05)
    means = torch.tensor([0.2, 1.0, 0.5])
    for _ in range(150):
        with torch.no_grad():
            old = torch.log_softmax(theta, 0)
            a = torch.multinomial(old.exp(), 16, replacement=True, generator=gen)
            r = means[a] + 0.1 * torch.randn(16, generator=gen)
        adv = group_advantages(r, torch.zeros(16, dtype=torch.long))
        for _ in range(2):
            opt.zero_grad()
            clipped_surrogate(torch.log_softmax(theta, 0)[a], old[a], adv, 0.2).backward()
            opt.step()
    assert torch.softmax(theta, 0)[1].item() > 0.95


def test_dpo_at_the_reference_and_its_gradient():
    lw = torch.tensor([-2.0], requires_grad=True)
    ll = torch.tensor([-3.0], requires_grad=True)
    loss = dpo_loss(lw, ll, lw.detach(), ll.detach(), beta=0.5)
    assert loss.item() == pytest.approx(math.log(2))
    loss.backward()
    assert lw.grad.item() == pytest.approx(-0.25) and ll.grad.item() == pytest.approx(0.25)   # -+beta/2


def test_sequence_and_token_logp():
    logits = torch.log(torch.tensor([[0.5, 0.5], [0.25, 0.75], [0.9, 0.1]]))
    out = sequence_logp(logits, torch.tensor([0, 1, 0]), torch.tensor([0, 0, 1]), 2)
    assert torch.allclose(out, torch.log(torch.tensor([0.5 * 0.75, 0.9])), atol=1e-6)
    tok = token_logp(logits[None], torch.tensor([[1, 1, 0]]))
    assert torch.allclose(tok, torch.log(torch.tensor([[0.5, 0.75, 0.9]])), atol=1e-6)
    assert masked_mean(torch.tensor([1.0, 3.0, 100.0]), torch.tensor([1, 1, 0])).item() == 2.0


@pytest.mark.parametrize("call, message", [
    (lambda: group_advantages(torch.ones(3), torch.zeros(2)), "1-D of one length"),
    (lambda: group_advantages(torch.ones(2), torch.zeros(2), eps=0), "eps must be > 0"),
    (lambda: clipped_surrogate(torch.zeros(1), torch.zeros(1), torch.ones(1), 1.5), "clip must be in (0, 1)"),
    (lambda: clipped_surrogate(torch.zeros(2), torch.zeros(3), torch.ones(2), 0.2), "one shape"),
    (lambda: dpo_loss(torch.zeros(1), torch.zeros(1), torch.zeros(1), torch.zeros(1), 0.0), "beta must be > 0"),
    (lambda: masked_mean(torch.ones(2), torch.zeros(2)), "selects no entry"),
    (lambda: masked_mean(torch.ones(2), torch.ones(3)), "shape of x"),
    (lambda: token_logp(torch.zeros(2, 3), torch.zeros(2, 3)), "batch x tokens x vocab"),
])
def test_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
