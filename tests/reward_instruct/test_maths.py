"""reward_instruct's maths against known cases: the noise schedule in closed form, DDIM with an
exact epsilon oracle (any number of steps, any eta, lands on the data point; a point outside
[-1, 1] lands on its clipped value only because epsilon is recomputed from the clipped x0), the
judge's measures on known sets, and the generator training's inputs."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from stages.reward_instruct import diffusion as D
from stages.reward_instruct.evaluate import grid_image
from stages.reward_instruct.measure import judge_metrics


def test_schedule_is_the_cumulative_product():
    ab = D.schedule(10, 0.2)
    betas = np.linspace(1e-4, 0.2, 10)
    assert np.allclose(ab.numpy(), np.cumprod(1 - betas))
    with pytest.raises(ValueError, match="0 < beta_max < 1"):
        D.schedule(10, 1.5)


def test_ddim_timesteps_span_the_chain():
    assert D.ddim_timesteps(100, 4) == [99, 66, 33, 0]
    assert D.ddim_timesteps(100, 1) == [99]
    with pytest.raises(ValueError, match="steps must be in"):
        D.ddim_timesteps(100, 0)


def run_chain(x_star, abar, steps, eta, gen, recompute=True):
    """DDIM from noise to the end with the exact epsilon of a point mass at x_star."""
    ts = D.ddim_timesteps(len(abar), steps)
    x = torch.randn(x_star.shape, generator=gen)
    for i, t in enumerate(ts):
        ab_t = float(abar[t])
        ab_prev = float(abar[ts[i + 1]]) if i + 1 < len(ts) else 1.0
        eps = (x - math.sqrt(ab_t) * x_star) / math.sqrt(1 - ab_t)
        x, x0 = D.ddim_step(x, eps, ab_t, ab_prev, eta, torch.randn(x.shape, generator=gen))
    return x


@pytest.mark.parametrize("steps,eta", [(4, 0.0), (4, 1.0), (50, 0.0), (7, 0.5)])
def test_ddim_with_an_exact_epsilon_lands_on_the_point(steps, eta):
    abar = D.schedule(100, 0.2)
    x_star = torch.linspace(-0.9, 0.9, 64, dtype=torch.float64)[None]
    out = run_chain(x_star, abar.double(), steps, eta, torch.Generator().manual_seed(0))
    assert torch.allclose(out, x_star, atol=1e-9)


def test_ddim_clips_and_recomputes_epsilon():
    # x0 predicted outside [-1, 1] is clipped, and epsilon recomputed from the clipped x0: the step
    # moves x along the DDIM path towards the clipped point (same implied epsilon before and after)
    ab_t, ab_prev = 0.3, 0.7
    x = torch.tensor([[0.2, -0.4]], dtype=torch.float64)
    eps = (x - math.sqrt(ab_t) * torch.tensor([[2.0, -3.0]], dtype=torch.float64)) / math.sqrt(1 - ab_t)
    x_prev, x0 = D.ddim_step(x, eps, ab_t, ab_prev, 0.0, 0.0)
    assert torch.equal(x0, torch.tensor([[1.0, -1.0]], dtype=torch.float64))
    implied_before = (x - math.sqrt(ab_t) * x0) / math.sqrt(1 - ab_t)
    implied_after = (x_prev - math.sqrt(ab_prev) * x0) / math.sqrt(1 - ab_prev)
    assert torch.allclose(implied_before, implied_after)
    # a point outside [-1, 1] with an exact epsilon: the whole chain ends on its clipped value
    abar = D.schedule(100, 0.2).double()
    out = run_chain(torch.full((1, 64), 1.5, dtype=torch.float64), abar, 4, 0.0, torch.Generator().manual_seed(1))
    assert torch.allclose(out, torch.ones_like(out))


def test_sample_is_deterministic_and_differentiable():
    net = D.make_epsnet(16, 1)
    abar = D.schedule(20, 0.2)
    c = torch.tensor([0, 1, 2])
    a = D.sample(net, abar, c, 3, torch.Generator().manual_seed(3), eta=0.5)
    b = D.sample(net, abar, c, 3, torch.Generator().manual_seed(3), eta=0.5)
    assert torch.equal(a, b) and a.shape == (3, 64) and a.abs().max() <= 1
    a.sum().backward()
    assert next(net.parameters()).grad is not None


def test_judge_metrics_on_known_sets():
    torch.manual_seed(0)
    judge = D.make_classifier(16, 8)
    x = np.random.default_rng(0).uniform(-1, 1, (40, 64)).astype(np.float32)
    with torch.no_grad():
        pred = judge(torch.from_numpy(x)).argmax(1).numpy()
        feats = judge[:-1](torch.from_numpy(x)).double().numpy()
    m = judge_metrics(judge, x, pred, feats)
    assert m["accuracy"] == 1.0 and m["logp"] < 0 and abs(m["fd"]) < 1e-6
    assert judge_metrics(judge, x, (pred + 1) % 10, feats)["accuracy"] == 0.0


def test_weight_distance_and_bad_methods():
    net = D.make_epsnet(8, 1)
    ref = [p.detach().clone() for p in net.parameters()]
    assert D.sq_distance(net, ref).item() == 0.0
    with torch.no_grad():
        next(net.parameters()).add_(0.5)
    n = next(net.parameters()).numel()
    assert D.sq_distance(net, ref).item() == pytest.approx(0.25 * n)
    kw = dict(steps=1, batch=4, lr=1e-3, lam=0.0, random_eta=False, gen_steps=2, gen=torch.Generator(),
              checkpoints=[], on_checkpoint=lambda s: None)
    with pytest.raises(ValueError, match="must be 'r0' or 'distill'"):
        D.train_generator(net, D.schedule(10, 0.2), D.make_classifier(8, 8), method="dpo", **kw)
    with pytest.raises(ValueError, match="needs the teacher's pool"):
        D.train_generator(net, D.schedule(10, 0.2), D.make_classifier(8, 8), method="distill", **kw)


def test_grid_image_layout():
    sets = [np.full((10 * 3, 64), v) for v in (-1.0, 1.0)]
    img = grid_image(sets, 2)
    assert img.shape == (10 * 9, 2 * (2 * 9 + 3)) and img.min() == 0 and img.max() == 1 and img[0, -1] == 0
