"""zipf_bigram maths: closed forms vs iterations, simulators vs the full torch model, fits, data."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.zipf_bigram import data, model, torch_model
from stages.zipf_bigram.model import (first_hit, gd_iterations, gd_relative_error, loglog_fit,
                                      power_law, sign_envelope, sign_errors, sign_iterations,
                                      sign_relative_error, tuned_sign)


# --------------------------------------------------------------------------------------
# power law
# --------------------------------------------------------------------------------------
def test_power_law_known_values():
    """power_law(4, 1) = [1, 1/2, 1/3, 1/4] / (25/12); alpha = 0 is uniform; d < 1 is an error."""
    np.testing.assert_allclose(power_law(4, 1.0), np.array([1, 1 / 2, 1 / 3, 1 / 4]) * 12 / 25,
                               rtol=0, atol=1e-15)
    np.testing.assert_array_equal(power_law(8, 0.0), np.full(8, 1 / 8))
    with pytest.raises(ValueError):
        power_law(0, 1.0)


# --------------------------------------------------------------------------------------
# gradient descent: closed form
# --------------------------------------------------------------------------------------
def _gd_loop(pi: np.ndarray, t: int) -> float:
    """Iterate r_i <- (1 - pi_i / pi_1) r_i from r = 1 and return sum pi r^2 / sum pi."""
    r = np.ones_like(pi)
    for _ in range(t):
        r = (1.0 - pi / pi[0]) * r
    return float((pi * r * r).sum() / pi.sum())


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0])
def test_gd_closed_form_equals_iterated_recursion(alpha):
    """gd_relative_error(pi, t) == the per-row recursion iterated t times (d = 16)."""
    pi = power_law(16, alpha)
    for t in [0, 1, 2, 5, 17, 100]:
        assert gd_relative_error(pi, t) == pytest.approx(_gd_loop(pi, t), rel=1e-12, abs=1e-15)


def test_gd_closed_form_at_zero_and_vectorised():
    """At t = 0 the relative error is exactly 1; an array of t gives the same values as scalars."""
    pi = power_law(32, 1.0)
    assert gd_relative_error(pi, 0) == 1.0
    ts = np.array([0, 3, 10, 40])
    np.testing.assert_allclose(gd_relative_error(pi, ts), [gd_relative_error(pi, t) for t in ts],
                               rtol=1e-14)


def test_gd_uniform_solved_in_one_step():
    """alpha = 0: every pi_i = pi_1, so one step of size 1/pi_1 reaches the minimum exactly."""
    pi = power_law(10, 0.0)
    assert gd_relative_error(pi, 1) == 0.0
    assert gd_iterations(pi, 1e-9) == 1


@pytest.mark.parametrize("d", [32, 64])
@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0])
def test_full_torch_gd_matches_closed_form(d, alpha):
    """Full d×d torch GD (step 1/pi_1) relative errors == gd_relative_error for t = 0..200 (< 1e-10)."""
    pi = power_law(d, alpha)
    st = torch_model.permuted_power_law(pi, pi, seed=3)
    T = 200
    rel = torch_model.train(st, "gd", T, 1.0 / pi[0])
    closed = gd_relative_error(pi, np.arange(T + 1))
    assert rel[0] == pytest.approx(1.0, abs=1e-14)
    assert np.max(np.abs(rel - closed)) < 1e-10


# --------------------------------------------------------------------------------------
# sign descent: closed form of the entries
# --------------------------------------------------------------------------------------
HAND_Q = np.array([0.5, 0.3, 0.2])
# eta = 0.2, w(0) = 0:
#   q=0.5: w = 0, .2, .4, .6, .4, .6  -> |w - q| = .5, .3, .1, .1, .1, .1
#   q=0.3: w = 0, .2, .4, .2, .4, .2  -> .3, .1, .1, .1, .1, .1
#   q=0.2: w = 0, .2, .2, ...(grad 0) -> .2, 0, 0, 0, 0, 0
HAND_ERR = np.array([[.5, .3, .2], [.3, .1, 0], [.1, .1, 0], [.1, .1, 0], [.1, .1, 0], [.1, .1, 0]])


def test_sign_errors_hand_case():
    """sign_errors(q=[.5,.3,.2], t, eta=.2) equals the hand-computed trajectories for t = 0..5."""
    got = np.array([sign_errors(HAND_Q, t, 0.2) for t in range(6)])
    np.testing.assert_allclose(got, HAND_ERR, rtol=0, atol=1e-12)
    for t in range(6):
        assert sign_relative_error(HAND_Q, t, 0.2) == pytest.approx(
            (HAND_ERR[t] ** 2).sum() / (HAND_Q ** 2).sum(), abs=1e-12)


def test_sign_hand_case_full_torch_model():
    """The 3×3 torch model under sign descent (eta = .2) gives the hand-computed relative errors."""
    st = torch_model.permuted_power_law(np.array([0.5, 0.3, 0.2]), HAND_Q, seed=0)
    rel = torch_model.train(st, "sign", 5, 0.2)
    np.testing.assert_allclose(rel, (HAND_ERR ** 2).sum(1) / (HAND_Q ** 2).sum(), rtol=0,
                               atol=1e-12)


def test_sign_errors_broadcast_over_steps():
    """An array of etas gives one row per eta, each equal to the scalar call."""
    q = power_law(8, 1.0)
    etas = np.array([0.01, 0.05, 0.2])
    got = sign_errors(q, 7, etas)
    assert got.shape == (3, 8)
    for row, eta in zip(got, etas):
        np.testing.assert_array_equal(row, sign_errors(q, 7, eta))


@pytest.mark.parametrize("alpha, eta", [(1.0, 0.0137), (0.5, 0.0071), (2.0, 0.021)])
def test_sign_simulator_matches_full_torch_model(alpha, eta):
    """sign_relative_error == torch sign descent on a permuted d=32 model for t = 0..80 (< 1e-10)."""
    pi = power_law(32, alpha)
    st = torch_model.permuted_power_law(pi, pi, seed=11)
    T = 80
    rel = torch_model.train(st, "sign", T, eta)
    sim = np.array([sign_relative_error(pi, t, eta) for t in range(T + 1)])
    assert np.max(np.abs(rel - sim)) < 1e-10


def test_sign_simulate_hand_case():
    """sign_simulate(q=[.5,.3,.2], 5, eta=.2) gives the hand-computed relative errors."""
    np.testing.assert_allclose(model.sign_simulate(HAND_Q, 5, 0.2),
                               (HAND_ERR ** 2).sum(1) / (HAND_Q ** 2).sum(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("T", [10, 26, 40])
def test_sign_simulate_matches_full_model_at_tuned_eta(tuning, T):
    """d = 64, alpha = 1, eta = tuned_sign(q, T): the per-frequency simulator == the full d×d torch model."""
    q = power_law(64, 1.0)
    _, eta = tuned_sign(q, T, tuning)
    assert eta > 0
    rel = torch_model.train(torch_model.permuted_power_law(q, q, seed=5), "sign", T + 1, eta)
    assert np.max(np.abs(rel - model.sign_simulate(q, T + 1, eta))) < 1e-12


@pytest.mark.parametrize("T", [10, 26, 40])
def test_tuned_error_is_what_the_full_model_reaches(tuning, T):
    """d = 64, alpha = 1: tuned_sign's error (closed form) == the full model's envelope max(rel[T], rel[T+1])
    at the tuned eta, and the closed form matches the full model at every t <= T+1 (< 1e-10)."""
    q = power_law(64, 1.0)
    err, eta = tuned_sign(q, T, tuning)
    rel = torch_model.train(torch_model.permuted_power_law(q, q, seed=5), "sign", T + 1, eta)
    closed = np.array([sign_relative_error(q, t, eta) for t in range(T + 2)])
    assert abs(max(rel[T], rel[T + 1]) - err) < 1e-10, (max(rel[T], rel[T + 1]), err, eta)
    assert np.max(np.abs(rel - closed)) < 1e-10


# --------------------------------------------------------------------------------------
# first_hit / iterations
# --------------------------------------------------------------------------------------
def test_first_hit_known_function():
    """f(t) = 1/(t+1): first t with f <= 1/38 is 37, f <= 0.01 is 99; f(0) <= eps gives 0."""
    f = lambda t: 1.0 / (t + 1)  # noqa: E731
    assert first_hit(f, 1 / 38, 10**6) == 37
    assert first_hit(f, 0.01, 10**6) == 99
    assert first_hit(f, 0.01, 99) == 99       # hit exactly at t_max
    assert first_hit(f, 1.0, 10) == 0
    for eps in np.linspace(0.002, 0.9, 41):  # agrees with a linear scan
        assert first_hit(f, eps, 10**6) == next(t for t in range(10**4) if f(t) <= eps)


def test_first_hit_none_beyond_t_max():
    """Not reached by t_max -> None (also when t_max is not a power of two)."""
    f = lambda t: 1.0 / (t + 1)  # noqa: E731
    assert first_hit(f, 0.01, 98) is None
    assert first_hit(f, 0.01, 50) is None
    assert first_hit(f, 0.01, 64) is None


def test_gd_iterations_equals_linear_scan():
    """gd_iterations (bisection) == the first t of a linear scan of gd_relative_error (d = 64)."""
    pi = power_law(64, 1.0)
    for eps in [1e-1, 1e-2, 1e-3]:
        lin = next(t for t in range(10**5) if gd_relative_error(pi, t) <= eps)
        assert gd_iterations(pi, eps) == lin


def test_gd_iterations_monotone_in_d_alpha1():
    """At alpha = 1 GD needs non-decreasing (in fact growing) iterations as d doubles, 2^4..2^12."""
    its = [gd_iterations(power_law(2 ** k, 1.0), 1e-3) for k in range(4, 13)]
    assert all(a <= b for a, b in zip(its, its[1:])), its
    assert its[-1] > 10 * its[0]


def test_gd_iterations_none_beyond_t_max():
    """A budget below the true count gives None."""
    pi = power_law(256, 1.0)
    t = gd_iterations(pi, 1e-3)
    assert gd_iterations(pi, 1e-3, t_max=t - 1) is None
    assert gd_iterations(pi, 1e-3, t_max=t) == t


def test_sign_one_exact_step_solves_uniform():
    """Why alpha = 0 needs T = 1: with eta = q_1 = 1/d one step puts every entry on its target and
    sign(0) = 0 keeps it there, so the envelope max(err(1), err(2)) is exactly 0."""
    q = power_law(1024, 0.0)
    assert np.all(sign_errors(q, 1, q[0]) == 0) and np.all(sign_errors(q, 2, q[0]) == 0)
    assert float(sign_envelope(q, 1, q[0])) == 0.0


def test_sign_iterations_uniform_is_dimension_free(tuning):
    """alpha = 0 with steps in generic position: the exact one-step solution of
    test_sign_one_exact_step_solves_uniform is not on the grid, so a fixed step oscillates and
    T grows like 1/sqrt(eps) -- the same T for every d (no rounding-driven d-dependence)."""
    its = {sign_iterations(power_law(2 ** k, 0.0), 1e-3, tuning)[0] for k in range(7, 12)}
    assert len(its) == 1 and next(iter(its)) > 1, its


def test_sign_grid_is_in_generic_position(tuning):
    """No target q_k (alpha = 1, d = 128) is an exact multiple of a grid step for T = 1..200,
    the case where the closed form (exact arithmetic) and the float iterate would part ways."""
    q = power_law(128, 1.0)
    for T in range(1, 201):
        scale = q.max() / T * model.GENERIC
        etas = np.geomspace(tuning.grid_lo * scale, tuning.grid_hi * scale, tuning.grid_size)
        ratio = q[None, :] / etas[:, None]
        assert np.min(np.abs(ratio - np.round(ratio)) / ratio) > 1e-9, T


def _linear_sign_iterations(q, eps, tuning, t_max):
    return next(t for t in range(t_max + 1) if tuned_sign(q, t, tuning)[0] <= eps)


@pytest.mark.parametrize("eps", [1e-2, 1e-3])
def test_sign_iterations_equals_linear_scan(tuning, eps):
    """sign_iterations (geometric scan + gap refinement) == the smallest T of a linear scan (d=128, alpha=1)."""
    q = power_law(128, 1.0)
    T, eta = sign_iterations(q, eps, tuning)
    lin = _linear_sign_iterations(q, eps, tuning, T)
    assert T == lin, f"scan {T}, linear scan {lin}"


def test_sign_iterations_beats_gd_at_alpha1(tuning):
    """At d = 1024, alpha = 1, eps = 1e-3, tuned sign descent needs under half the iterations of GD."""
    q = power_law(1024, 1.0)
    t_sign, _ = sign_iterations(q, 1e-3, tuning)
    assert t_sign is not None and 2 * t_sign < gd_iterations(q, 1e-3)


# --------------------------------------------------------------------------------------
# log-log fit
# --------------------------------------------------------------------------------------
def test_loglog_fit_exact_power():
    """y = 3 x^0.5 -> slope 0.5, intercept log 3, r2 1, a CI of zero width around 0.5."""
    x = 2.0 ** np.arange(7, 15)
    fit = loglog_fit(x, 3 * x ** 0.5)
    assert fit["slope"] == pytest.approx(0.5, abs=1e-12)
    assert fit["intercept"] == pytest.approx(np.log(3), abs=1e-10)
    assert fit["r2"] == pytest.approx(1.0, abs=1e-12)
    assert fit["ci95_low"] <= 0.5 + 1e-12 and fit["ci95_high"] >= 0.5 - 1e-12
    assert fit["ci95_high"] - fit["ci95_low"] < 1e-8


def test_loglog_fit_noisy_ci_coverage():
    """y = 3 x^0.5 * lognormal noise: over 400 seeds the 95% CI contains 0.5 in 92-98% of fits."""
    x = 2.0 ** np.arange(4, 20)
    hits, widths = 0, []
    for seed in range(400):
        rng = np.random.default_rng(seed)
        fit = loglog_fit(x, 3 * x ** 0.5 * np.exp(rng.normal(0, 0.1, size=x.size)))
        hits += fit["ci95_low"] <= 0.5 <= fit["ci95_high"]
        widths.append(fit["ci95_high"] - fit["ci95_low"])
        assert fit["ci95_high"] - fit["slope"] == pytest.approx(fit["slope"] - fit["ci95_low"])
    assert 0.92 <= hits / 400 <= 0.98
    assert 0 < np.median(widths) < 0.05


def test_loglog_fit_edge_cases():
    """Constant y -> slope 0; a single point is an error."""
    assert loglog_fit([1, 2, 4], [5, 5, 5])["slope"] == 0.0
    with pytest.raises(ValueError):
        loglog_fit([1.0], [2.0])


# --------------------------------------------------------------------------------------
# the torch model
# --------------------------------------------------------------------------------------
def test_gradient_equals_autograd():
    """torch_model.gradient == autograd of BigramStats.loss at a random W (d = 16)."""
    pi = power_law(16, 1.0)
    st = torch_model.permuted_power_law(pi, pi, seed=1)
    W = torch.randn(16, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    W.requires_grad_(True)
    st.loss(W).backward()
    torch.testing.assert_close(torch_model.gradient(st, W.detach()), W.grad, rtol=0, atol=1e-14)


def test_permuted_model_rows_are_permutations_of_q():
    """Each row of P is a permutation of q (sorted row == sorted q), rows differ, and L(P) = L* is the min."""
    pi = power_law(16, 1.0)
    st = torch_model.permuted_power_law(pi, pi, seed=2)
    srt = torch.sort(st.P, dim=1, descending=True).values
    torch.testing.assert_close(srt, torch.as_tensor(pi).expand(16, 16), rtol=0, atol=0)
    assert len(set(torch.argmax(st.P, 1).tolist())) > 1  # independent permutations per row
    W = st.P + 0.01
    assert float(st.loss(W) - st.optimum()) == pytest.approx(torch_model.excess_loss(st, W),
                                                              rel=1e-9)


def test_sufficient_stats_loss_equals_one_hot_loss():
    """On 2000 sampled pairs, from_pairs(...).loss(W) == ||XW - Y||^2 / 2n at random W (1e-10)."""
    d = 32
    pi = power_law(d, 1.0)
    x, y, _ = data.sample_pairs(pi, pi, n=2000, seed=4, permutation_seed=9)
    st = torch_model.from_pairs(x, y, d)
    g = torch.Generator().manual_seed(1)
    for _ in range(3):
        W = torch.randn(d, d, dtype=torch.float64, generator=g)
        assert abs(float(st.loss(W)) - float(torch_model.one_hot_loss(W, x, y))) < 1e-10


def test_sampled_pairs_follow_the_permuted_model():
    """Every sampled pair has P[x, y] == q[k] in permuted_power_law with the same permutation seed."""
    d = 64
    pi = power_law(d, 1.0)
    x, y, k = data.sample_pairs(pi, pi, n=5000, seed=0, permutation_seed=123)
    st = torch_model.permuted_power_law(pi, pi, seed=123)
    np.testing.assert_array_equal(st.P.numpy()[x, y], pi[k])


def test_train_rejects_unknown_optimizer():
    """train with an optimizer name outside gd/sign/adam raises ValueError."""
    st = torch_model.permuted_power_law(power_law(4, 1.0), power_law(4, 1.0), seed=0)
    with pytest.raises(ValueError, match="unknown optimizer"):
        torch_model.train(st, "lbfgs", 3, 0.1)


def test_adam_decreases_loss():
    """Adam on a d = 16 model reaches a lower relative error than at start."""
    pi = power_law(16, 1.0)
    rel = torch_model.train(torch_model.permuted_power_law(pi, pi, seed=0), "adam", 50, 0.01)
    assert rel[0] == pytest.approx(1.0) and rel[-1] < 0.5


# --------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------
def test_fitted_exponent_recovers_alpha1():
    """Pairs sampled at alpha = 1, d = 256, n = 200000: fitted exponents of x and k are within 0.15 of 1."""
    pi = power_law(256, 1.0)
    x, _, k = data.sample_pairs(pi, pi, n=200_000, seed=0, permutation_seed=1)
    assert abs(data.fitted_exponent(x) - 1.0) < 0.15
    assert abs(data.fitted_exponent(k) - 1.0) < 0.15


def test_fitted_exponent_exact_and_too_few():
    """Counts exactly ∝ r^-2 give exponent 2; fewer than three ranks give NaN."""
    counts = (10_000 / np.arange(1, 11) ** 2).round().astype(int)
    samples = np.repeat(np.arange(10), counts)
    assert data.fitted_exponent(samples) == pytest.approx(2.0, abs=0.01)
    assert np.isnan(data.fitted_exponent(np.array([0] * 30 + [1] * 30)))
