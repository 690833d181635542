"""diff_purify's attacks, purification and Fréchet distance against known cases."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.diff_purify import core

from tests.helpers import bit_exact_batching


def linear_logits(w):
    """Two classes, logits (0, w.x): cross-entropy of class 0 grows with w.x."""
    return lambda x: torch.stack([torch.zeros(len(x)), x @ w], dim=1)


def test_pgd_on_a_linear_model_finds_the_closed_form_perturbation():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(64, generator=g)
    x = torch.full((3, 64), 0.5)                       # interior: the [0, 1] box is not active
    y = torch.zeros(3, dtype=torch.long)
    for eps in (0.05, 0.2):
        adv = core.pgd(linear_logits(w), x, y, eps, eps / 4, 12, g)    # 12 steps of eps/4 cross the ball
        torch.testing.assert_close(adv, x + eps * torch.sign(w).expand_as(x))


def test_pgd_stays_in_the_ball_and_the_box():
    g = torch.Generator().manual_seed(1)
    w = torch.randn(64, generator=g)
    x = torch.rand(5, 64, generator=g)
    adv = core.pgd(linear_logits(w), x, torch.zeros(5, dtype=torch.long), 0.1, 0.05, 5, g)
    assert float((adv - x).abs().max()) <= 0.1 + 1e-6 and float(adv.min()) >= 0 and float(adv.max()) <= 1


def test_pgd_matches_the_adversarial_robustness_toolbox():
    """ART's ProjectedGradientDescentPyTorch, no random start: the same sign steps and projections."""
    pytest.importorskip("art")
    from art.attacks.evasion import ProjectedGradientDescentPyTorch
    from art.estimators.classification import PyTorchClassifier

    torch.manual_seed(0)
    clf = core.Classifier(16).eval()
    x = torch.rand(20, 64, generator=torch.Generator().manual_seed(6))
    y = torch.arange(20) % 10
    ours = core.pgd(clf, x, y, 0.1, 0.0125, 10, random_start=False)
    est = PyTorchClassifier(model=clf, loss=torch.nn.CrossEntropyLoss(), input_shape=(64,), nb_classes=10,
                            clip_values=(0.0, 1.0))
    art = ProjectedGradientDescentPyTorch(est, norm=np.inf, eps=0.1, eps_step=0.0125, max_iter=10,
                                          num_random_init=0, batch_size=20, verbose=False)
    theirs = art.generate(x=x.numpy(), y=y.numpy())
    np.testing.assert_allclose(ours.numpy(), theirs, atol=1e-6)


def test_bpda_with_an_identity_purifier_is_plain_pgd():
    torch.manual_seed(0)
    clf = core.Classifier(16).eval()
    x = torch.rand(6, 64, generator=torch.Generator().manual_seed(2))
    y = torch.arange(6) % 10
    a = core.pgd(clf, x, y, 0.1, 0.02, 7, torch.Generator().manual_seed(3))
    b, fooled = core.bpda_eot(clf, lambda z: z, x, y, 0.1, 0.02, 7, 1, torch.Generator().manual_seed(3))
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(fooled, clf(a).argmax(1) != y)


def test_eot_with_a_deterministic_purifier_equals_one_draw():
    torch.manual_seed(0)
    clf, prior = core.Classifier(16).eval(), core.ScoreNet(16).eval()
    pur = lambda z: core.purify(z, prior, None, 3, 0.5, 0.1, 0.3, 0.0, 0.05, noise=False)  # noqa: E731
    x = torch.rand(4, 64, generator=torch.Generator().manual_seed(4))
    y = torch.arange(4)
    a, _ = core.bpda_eot(clf, pur, x, y, 0.1, 0.02, 5, 1, torch.Generator().manual_seed(5))
    b, _ = core.bpda_eot(clf, pur, x, y, 0.1, 0.02, 5, 4, torch.Generator().manual_seed(5))
    torch.testing.assert_close(a, b)


def test_purify_with_an_exact_denoiser_of_a_point_mass_moves_towards_it():
    """A score net predicting eps = (x - c) / sigma is the exact denoiser of data at c: each step
    moves x a fraction eta of the way to c (no noise), so after K steps x - c shrinks by (1 - eta)^K."""
    c = torch.full((64,), 0.3)

    class PointMass(core.ScoreNet):
        def forward(self, x, sigma):
            return (x - c) / sigma.reshape(-1, 1)

    x = torch.full((2, 64), 0.8)
    out = core.purify(x, PointMass(8), None, 4, 0.5, 0.1, 0.25, 0.0, 0.05, noise=False)
    torch.testing.assert_close(out, c + (x - c) * 0.75 ** 4)
    # the perturbation term with the same exact denoiser of delta = 0 pulls x back to x_in:
    # step = eta * [(c - x) + lam * (x_in - x)]
    zero = torch.zeros(64)

    class ZeroDelta(core.ScoreNet):
        def forward(self, d, sigma):
            return (d - zero) / sigma.reshape(-1, 1)

    one = core.purify(x, PointMass(8), ZeroDelta(8), 1, 0.5, 0.5, 0.25, 1.0, 0.05, noise=False)
    torch.testing.assert_close(one, x + 0.25 * (c - x))        # delta = 0 at the first step


def test_denoising_score_matching_learns_the_gaussian_denoiser():
    """Data N(m, s^2 I): the optimal denoiser is m + s^2 / (s^2 + sigma^2) (x - m)."""
    rng = np.random.default_rng(0)
    m, s = 0.5, 0.1
    data = (m + s * rng.standard_normal((2000, 64))).astype(np.float32)
    net, losses = core.train_score(data, 64, 800, 3e-3, 128, 0.05, 0.5, 0)
    assert np.mean(losses[-50:]) < np.mean(losses[:50])
    g = torch.Generator().manual_seed(1)
    sigma = 0.3
    x0 = torch.as_tensor(data[:500])
    xs = x0 + sigma * torch.randn(x0.shape, generator=g)
    with torch.no_grad():
        got = net.denoise(xs, sigma)
    want = m + s ** 2 / (s ** 2 + sigma ** 2) * (xs - m)
    # a wrong sign or scale of the target would leave it worse than not denoising at all (ratio >= 1)
    assert float((got - want).pow(2).mean()) < 0.6 * float((xs - want).pow(2).mean())
    assert float((got - x0).pow(2).mean()) < 0.5 * float((xs - x0).pow(2).mean())


@pytest.mark.parametrize("call, message", [
    (lambda: core.pgd(lambda x: x, torch.zeros(1, 64), torch.zeros(1, dtype=torch.long), -0.1, 0.1, 1), "need eps >= 0"),
    (lambda: core.bpda_eot(lambda x: x, lambda x: x, torch.zeros(1, 64), torch.zeros(1, dtype=torch.long), 0.1, 0.1, 1, 0),
     "eot must be >= 1"),
    (lambda: core.train_score(np.zeros((4, 64), np.float32), 8, 1, 1e-3, 4, 0.5, 0.1, 0), "0 < sigma_min <= sigma_max"),
])
def test_bad_inputs_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_digits_split_is_seeded_and_scaled():
    from stages.diff_purify.data import load_digits_split

    a = load_digits_split(0.25, 0)
    b = load_digits_split(0.25, 0)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert a[0].min() >= 0 and a[0].max() <= 1 and a[0].shape[1] == 64 and len(a[2]) == 450
    with pytest.raises(ValueError, match="test_fraction"):
        load_digits_split(1.5, 0)


def test_the_blind_prior_leaves_only_the_purifiers_injected_noise():
    """BlindScore predicts no noise, so its denoiser returns its input and each purification step
    adds eta * sigma * n: the noise_only defence is x_in plus the loop's noise, clipped to [0, 1]."""
    x = torch.rand(5, 64, generator=torch.Generator().manual_seed(8)) * 0.5 + 0.25
    blind = core.BlindScore()
    torch.testing.assert_close(core.purify(x, blind, None, 4, 0.5, 0.05, 0.3, 0.0, 0.05, noise=False), x)
    got = core.purify(x, blind, None, 4, 0.5, 0.05, 0.3, 0.0, 0.05, torch.Generator().manual_seed(9))
    g = torch.Generator().manual_seed(9)
    want = x.clone()
    for sig in core.sigma_schedule(4, 0.5, 0.05):
        want = want + 0.3 * sig * torch.randn(x.shape, generator=g)
    torch.testing.assert_close(got, want.clamp(0, 1))
    assert float((got - x).abs().mean()) > 0.05          # it does move the input


@bit_exact_batching
def test_batched_training_gives_each_model_its_training_alone():
    """train_classifiers / train_scores (a model dimension) against train_classifier / train_score
    one model at a time: the same weights and losses bit for bit, each model with its own data,
    noise range and seed."""
    rng = np.random.default_rng(3)
    xs = [rng.random((40 + 10 * k, 64)).astype(np.float32) for k in range(3)]
    ys = [rng.integers(0, 10, len(x)) for x in xs]
    seeds = [11, 12, 13]
    from stages.diff_purify import batched

    clfs, clf_losses = batched.train_classifiers(xs, ys, 16, 25, 1e-2, 8, seeds)
    sigmas = [(0.02, 1.0), (0.01, 0.5), (0.05, 0.3)]
    scores, score_losses = batched.train_scores(xs, 16, 25, 1e-2, 8, sigmas, seeds)
    for k, s in enumerate(seeds):
        alone, losses = core.train_classifier(xs[k], ys[k], 16, 25, 1e-2, 8, s)
        assert losses == clf_losses[k]
        for name, v in alone.state_dict().items():
            assert torch.equal(v, clfs[k].state_dict()[name]), (k, name)
        alone, losses = core.train_score(xs[k], 16, 25, 1e-2, 8, *sigmas[k], s)
        assert losses == score_losses[k]
        for name, v in alone.state_dict().items():
            assert torch.equal(v, scores[k].state_dict()[name]), (k, name)
    assert clf_losses[0] != clf_losses[1]
