"""SVGD / ESCORT maths: the vectorised direction against a loop over the formula, the exact
mixture score against finite differences, the exact Kalman-mixture belief against a single
Kalman filter, and convergence on a Gaussian target."""
from __future__ import annotations

import numpy as np

from stages.escort_belief import mixture, stein


def test_svgd_direction_matches_loop():
    rng = np.random.default_rng(0)
    X, S = rng.standard_normal((1, 7, 3)), rng.standard_normal((1, 7, 3))
    phi = stein.svgd_direction(X, S)[0]
    x, s = X[0], S[0]
    D2 = ((x[:, None] - x[None]) ** 2).sum(-1)
    h = np.median(D2[np.triu_indices(7, 1)]) / np.log(8)
    want = np.zeros_like(x)
    for i in range(7):
        for j in range(7):
            k = np.exp(-D2[j, i] / h)
            want[i] += k * s[j] + k * 2 * (x[i] - x[j]) / h
    assert np.allclose(phi, want / 7)


def test_sliced_direction_on_axes_matches_loop():
    rng = np.random.default_rng(1)
    X, S = rng.standard_normal((1, 6, 2)), rng.standard_normal((1, 6, 2))
    V = np.eye(2)[None]
    phi = stein.sliced_direction(X, S, V)[0]
    want = np.zeros((6, 2))
    for r in range(2):
        z = X[0, :, r]
        D2 = (z[:, None] - z[None]) ** 2
        h = np.sort(D2.ravel())[36 // 2 + 3] / np.log(7)
        for i in range(6):
            for j in range(6):
                k = np.exp(-D2[j, i] / h)
                want[i, r] += k * S[0, j, r] + k * 2 * (z[i] - z[j]) / h
    assert np.allclose(phi, want / 6)


def test_temporal_pull_moves_to_rank_matched_points():
    X = np.array([[[0.0], [1.0]]])
    Xp = np.array([[[5.0], [3.0]]])
    assert np.allclose(stein.temporal_pull(X, Xp, np.eye(1)[None]), [[[3.0], [4.0]]])


def test_mixture_score_matches_finite_differences():
    rng = np.random.default_rng(2)
    d, K = 3, 2
    m = rng.standard_normal((1, K, d))
    A = rng.standard_normal((K, d, d))
    P = (A @ A.transpose(0, 2, 1) + np.eye(d))[None]
    w = np.array([[0.3, 0.7]])
    X = rng.standard_normal((1, 4, d))

    def logp(x):
        out = 0.0
        for k in range(K):
            diff = x - m[0, k]
            out += w[0, k] * np.exp(-0.5 * diff @ np.linalg.solve(P[0, k], diff)) / np.sqrt(np.linalg.det(P[0, k]))
        return np.log(out)

    g = mixture.mixture_score(X, w, m, P)[0]
    eps = 1e-6
    for i in range(4):
        fd = [(logp(X[0, i] + eps * e) - logp(X[0, i] - eps * e)) / (2 * eps) for e in np.eye(d)]
        assert np.allclose(g[i], fd, atol=1e-5)


def test_one_mode_belief_is_the_kalman_filter():
    rng = np.random.default_rng(3)
    d = 2
    model = {"w": np.ones(1), "m": np.zeros((1, d)), "P": np.eye(d)[None], "F": mixture.plane_rotation(d, 0.3),
             "u": np.ones(d), "Q": 0.1 * np.eye(d), "H": np.eye(d)[:1], "R": 0.5 * np.eye(1)}
    ys = rng.standard_normal((2, 1))
    bel = mixture.exact_beliefs(model, ys)
    m, P = np.zeros(d), np.eye(d)
    for y in ys:
        m, P = model["F"] @ m + model["u"], model["F"] @ P @ model["F"].T + model["Q"]
        S = model["H"] @ P @ model["H"].T + model["R"]
        G = P @ model["H"].T @ np.linalg.inv(S)
        m, P = m + G @ (y - model["H"] @ m), P - G @ model["H"] @ P
    assert np.allclose(bel[-1]["m"][0], m) and np.allclose(bel[-1]["P"][0], P) and np.isclose(bel[-1]["w"][0], 1)


def test_svgd_and_escort_reach_a_gaussian():
    rng = np.random.default_rng(4)
    mu, P = np.array([[[1.0, -2.0]]]), np.array([[[[1.0, 0.8], [0.8, 1.0]]]])
    X0 = rng.standard_normal((1, 200, 2)) * 0.3
    for lam in (0.0, 0.5):
        cfg = stein.SteinConfig(iters=400, step=0.05, lambda_corr=lam)
        X = stein.stein_update(X0, lambda Y: mixture.mixture_score(Y, np.ones((1, 1)), mu, P), cfg)[0]
        assert np.allclose(X.mean(0), mu[0, 0], atol=0.1)
        assert np.allclose(np.cov(X.T), P[0, 0], atol=0.2)


def test_systematic_resample_keeps_counts():
    W = np.array([[0.5, 0.25, 0.25, 0.0]])
    idx = mixture.systematic_resample(np.random.default_rng(0), W)
    assert np.bincount(idx[0], minlength=4).tolist() == [2, 1, 1, 0]


# --- ESCORT as the official code implements it (stein.official_*) -----------------------------

def test_official_direction_matches_loop():
    """Kernel exp(-|x-y|^2 / (2h)), h = median distance x 0.5 x sqrt(d)/2, repulsion x (1 + 0.1 d),
    scores clipped to +-100 and the update to +-10, written as the official code's double loop."""
    rng = np.random.default_rng(2)
    X, S = rng.standard_normal((1, 7, 3)), rng.standard_normal((1, 7, 3)) * 40
    S[0, 0, 0] = 1e4                                    # clipped to 100 before use
    cfg = stein.OfficialConfig()
    got = stein.official_svgd_direction(X, S, cfg)[0]
    x, s = X[0], np.clip(S[0], -100, 100)
    D2 = ((x[:, None] - x[None]) ** 2).sum(-1)
    h = np.median(np.sqrt(D2[~np.eye(7, dtype=bool)])) * 0.5 * np.sqrt(3) / 2
    att, rep = np.zeros_like(x), np.zeros_like(x)
    for j in range(7):
        for i in range(7):
            k = np.exp(-D2[i, j] / (2 * h))
            att[j] += k * s[i]
            rep[j] += k * -(x[i] - x[j]) / h           # grad_K[i, j] summed over i
    want = np.clip((att + rep * 1.3) / 7, -10, 10)
    assert np.allclose(got, want)
    assert (np.abs(got) == 10).any()                    # the clip binds in this case


def test_official_update_clips_and_steps_plainly():
    """A huge score saturates the clip: one plain step moves every coordinate by step x 10."""
    X = np.array([[[0.0, 0.0], [0.01, 0.0], [0.0, 0.01], [0.01, 0.01], [0.005, 0.005]]])
    cfg = stein.OfficialConfig(iters=1)
    out = stein.official_update(X, lambda Y: (np.zeros(Y.shape[:2]), np.full_like(Y, 1e6)), cfg,
                                np.random.default_rng(0))
    assert np.allclose(out - X, 0.1)
    temp = np.full_like(X, 2.0)                         # the temporal term is added unclipped
    out = stein.official_update(X, lambda Y: (np.zeros(Y.shape[:2]), np.full_like(Y, 1e6)), cfg,
                                np.random.default_rng(0), temp)
    assert np.allclose(out - X, 0.01 * (10 + 2))


def test_official_resample_rule_on_hand_set():
    """Densities (relative to the max) 1 .9 .8 .7 .6 .05 .05 .05 .05 .5: the four below 0.1 are
    replaced by one of the five above the median (0.55) plus noise 0.1 (1 + 0.05 d); the rest stay."""
    dens = np.array([1, .9, .8, .7, .6, .05, .05, .05, .05, .5])
    X = (100.0 * np.arange(10)[:, None] * np.ones(2))[None]
    cfg = stein.OfficialConfig()
    out = stein.official_resample(np.random.default_rng(0), X, np.log(dens)[None] - 5.0, cfg)[0]
    keep = [0, 1, 2, 3, 4, 9]
    assert np.array_equal(out[keep], X[0, keep])
    for i in (5, 6, 7, 8):
        dist = np.linalg.norm(out[i] - X[0, :5], axis=1)
        assert dist.min() < 0.11 * 6 and dist.argmin() in range(5)
    small = X[:, :9]                                    # fewer than 10 particles: untouched
    assert np.array_equal(stein.official_resample(np.random.default_rng(0), small, np.log(dens[:9])[None], cfg), small)
    # every iteration 20, 40 (not 0) of the loop resamples: 41 iterations -> exactly two calls
    calls = []
    def ls(Y):
        calls.append(1)
        return np.zeros(Y.shape[:2]), np.zeros_like(Y)
    stein.official_update(np.random.default_rng(1).standard_normal((1, 12, 2)), ls,
                          stein.OfficialConfig(iters=41, tol=0.0), np.random.default_rng(0))
    assert len(calls) == 41 + 2


def test_gswd_regularizer_by_hand():
    """Source = target shifted by c: every projection matches equal ranks, so the regulariser is
    lambda c for every particle (weights sum to 1); source = target gives 0."""
    rng = np.random.default_rng(3)
    T = rng.standard_normal((2, 15, 4))
    c = np.array([0.3, -1.0, 0.5, 2.0])
    proj, w = stein.gswd_fit(rng, T + c, T, stein.OfficialConfig())
    assert proj.shape == (2, 10, 4) and np.allclose(w.sum(-1), 1) and np.allclose(np.linalg.norm(proj, axis=-1), 1)
    assert np.allclose(stein.gswd_regularizer(T + c, T, proj, w, 0.1), 0.1 * c)
    assert np.allclose(stein.gswd_regularizer(T, T, proj, w, 0.1), 0.0)


def test_mixture_logp_is_the_normalised_density():
    rng = np.random.default_rng(4)
    w, m = np.array([[0.3, 0.7]]), rng.standard_normal((1, 2, 3))
    A = rng.standard_normal((1, 2, 3, 3))
    P = A @ A.transpose(0, 1, 3, 2) + np.eye(3)
    X = rng.standard_normal((1, 5, 3))
    from scipy.stats import multivariate_normal as mvn
    want = np.log(sum(w[0, k] * mvn(m[0, k], P[0, k]).pdf(X[0]) for k in range(2)))
    logp, score = mixture.mixture_logp_score(X, w, m, P)
    assert np.allclose(logp[0], want) and np.array_equal(score, mixture.mixture_score(X, w, m, P))


# --- the in-place kernels equal the plain formulas (the study's speed-ups change no figure) -----

def test_sliced_direction_equals_the_full_partition_formula():
    """The bandwidth from the pairs i < j (entry (k - n) // 2) is the full n x n matrix's entry
    k = n^2 // 2 + n // 2, and the kernel written in place is exp(-D2 / h): bit for bit."""
    rng = np.random.default_rng(6)
    for n in (2, 3, 7, 10):
        X, S = rng.standard_normal((3, n, 4)), rng.standard_normal((3, n, 4))
        V = stein.correlation_directions(X)
        Z, G = X @ V, S @ V
        want = np.empty_like(Z)
        k = n * n // 2 + n // 2
        for r in range(4):
            z = Z[:, :, r]
            D2 = (z[:, :, None] - z[:, None, :]) ** 2
            h = (np.maximum(np.partition(D2.reshape(3, n * n), k, axis=1)[:, k], 1e-12) / np.log(n + 1.0))[:, None]
            K = np.exp(-D2 / h[:, :, None])
            repulse = (2.0 / h) * (z * K.sum(-1) - (K @ z[:, :, None])[:, :, 0])
            want[:, :, r] = ((K @ G[:, :, r:r + 1])[:, :, 0] + repulse) / n
        assert np.array_equal(stein.sliced_direction(X, S, V), want @ V.transpose(0, 2, 1)), n


def test_sq_dists_and_svgd_kernel_equal_the_plain_formulas():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((2, 9, 3))
    sq = (X * X).sum(-1)
    plain = np.maximum(sq[:, :, None] + sq[:, None, :] - 2.0 * X @ X.transpose(0, 2, 1), 0.0)
    D2 = stein.sq_dists(X)
    assert np.array_equal(D2, plain)
    iu = np.triu_indices(9, 1)
    assert np.array_equal(stein.upper_pairs(D2), D2[:, iu[0], iu[1]])
    h = stein.median_bandwidth(D2)[:, None, None]
    assert np.array_equal(stein.rbf_in_place(D2.copy(), h), np.exp(-D2 / h))


def test_predictive_score_equals_the_broadcast_formula():
    from stages.escort_belief.lightdark import predictive_score

    rng = np.random.default_rng(8)
    X, C, tau2 = rng.standard_normal((4, 6, 2)), rng.standard_normal((4, 6, 2)), rng.uniform(0.1, 1, (4, 2))
    D2 = ((X[:, :, None, :] - C[:, None, :, :]) ** 2 / tau2[:, None, None, :]).sum(-1)
    L = -0.5 * D2
    L -= L.max(-1, keepdims=True)
    R = np.exp(L)
    R /= R.sum(-1, keepdims=True)
    assert np.array_equal(predictive_score(X, C, tau2), (R @ C - X) / tau2[:, None, :])


def test_precomputed_precision_gives_the_same_score():
    rng = np.random.default_rng(9)
    A = rng.standard_normal((2, 3, 4, 4))
    P = A @ A.transpose(0, 1, 3, 2) + np.eye(4)
    w, m, X = np.full((2, 3), 1 / 3), rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    a, b = mixture.mixture_logp_score(X, w, m, P), mixture.mixture_logp_score(X, w, m, P, mixture.precision(P))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
