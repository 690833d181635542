"""The synthetic filtering problem: a correlated Gaussian-mixture belief whose modes drift.

Model (per replication b, dimension d): the prior x_0 ~ sum_k w_k N(m_k, P_k) with K modes,
means at distance ``separation`` from the origin along random directions, and covariances
P_k = R diag(lam) R^T (random rotation R, eigenvalues log-spaced in [cov_min, cov_max]: strongly
correlated). Linear-Gaussian dynamics x_t = F x_{t-1} + u + N(0, q^2 I) with F a rotation by
``angle`` in consecutive coordinate planes (the modes drift around the origin) and a drift u of
norm ``drift``; observations y_t = H x_t + N(0, r^2 I) of the first ``ceil(obs_frac d)``
coordinates. A Gaussian mixture stays a Gaussian mixture under this model: the exact belief at
every step is the K-component mixture given by one Kalman filter per component, with weights
updated by each component's predictive likelihood of y_t. So exact samples and the exact score
grad log p_t(x) are available.

Methods see: the bootstrap particle filter the generative model (transition sampler and
likelihood); SVGD / ESCORT the same predicted particles and the exact unnormalised belief
(its score), as in the study's calibration.
"""
from __future__ import annotations

import math

import numpy as np


def random_rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def plane_rotation(d: int, angle: float) -> np.ndarray:
    """Rotation by ``angle`` in the planes (0,1), (2,3), ...; an odd last coordinate is kept."""
    F = np.eye(d)
    c, s = math.cos(angle), math.sin(angle)
    for i in range(0, d - 1, 2):
        F[i:i + 2, i:i + 2] = [[c, -s], [s, c]]
    return F


def build_model(rng: np.random.Generator, d: int, mp) -> dict:
    """One replication's model (arrays); ``mp`` is the MixtureParams."""
    K = mp.modes
    dirs = rng.standard_normal((K, d))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    means = mp.separation * dirs
    lam = np.geomspace(mp.cov_min, mp.cov_max, d)
    covs = np.stack([(R := random_rotation(rng, d)) @ np.diag(rng.permutation(lam)) @ R.T for _ in range(K)])
    u = rng.standard_normal(d)
    u *= mp.drift / np.linalg.norm(u)
    d_obs = max(1, math.ceil(mp.obs_frac * d))
    return {"w": np.full(K, 1.0 / K), "m": means, "P": covs, "F": plane_rotation(d, mp.angle), "u": u,
            "Q": mp.q ** 2 * np.eye(d), "H": np.eye(d)[:d_obs], "R": mp.r ** 2 * np.eye(d_obs)}


def sample_mixture(rng: np.random.Generator, w, m, P, size: int) -> np.ndarray:
    """``size`` exact samples of sum_k w_k N(m_k, P_k)."""
    comp = rng.choice(len(w), size=size, p=w / w.sum())
    L = np.linalg.cholesky(P)
    eps = rng.standard_normal((size, m.shape[1]))
    return m[comp] + np.einsum("nij,nj->ni", L[comp], eps)


def simulate(rng: np.random.Generator, model: dict, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """A true trajectory x_0..x_T (T+1, d) and observations y_1..y_T (T, d_obs)."""
    x = sample_mixture(rng, model["w"], model["m"], model["P"], 1)[0]
    xs, ys = [x], []
    Lq, Lr = np.linalg.cholesky(model["Q"]), np.linalg.cholesky(model["R"])
    for _ in range(steps):
        x = model["F"] @ x + model["u"] + Lq @ rng.standard_normal(len(x))
        xs.append(x)
        ys.append(model["H"] @ x + Lr @ rng.standard_normal(model["H"].shape[0]))
    return np.array(xs), np.array(ys)


def exact_beliefs(model: dict, ys: np.ndarray) -> list[dict]:
    """The exact belief after each observation: [{w, m, P}] for t = 1..T (Kalman per mode)."""
    w, m, P = model["w"].copy(), model["m"].copy(), model["P"].copy()
    F, u, Q, H, R = model["F"], model["u"], model["Q"], model["H"], model["R"]
    out = []
    for y in ys:
        m = m @ F.T + u
        P = F @ P @ F.T + Q
        Sy = H @ P @ H.T + R                                # (K, o, o)
        innov = y - m @ H.T                                 # (K, o)
        sol = np.linalg.solve(Sy, innov[..., None])[..., 0]
        logl = -0.5 * (innov * sol).sum(-1) - 0.5 * np.linalg.slogdet(Sy)[1]
        logw = np.log(w) + logl
        w = np.exp(logw - logw.max())
        w /= w.sum()
        G = P @ H.T @ np.linalg.inv(Sy)                     # Kalman gains (K, d, o)
        m = m + np.einsum("kdo,ko->kd", G, innov)
        P = P - G @ H @ P
        P = 0.5 * (P + P.transpose(0, 2, 1))
        out.append({"w": w.copy(), "m": m.copy(), "P": P.copy()})
    return out


def precision(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P^-1, log det P) of the covariances P (B, K, d, d): what every score of one belief reuses."""
    return np.linalg.inv(P), np.linalg.slogdet(P)[1]


def mixture_logp_score(X: np.ndarray, w: np.ndarray, m: np.ndarray, P: np.ndarray,
                       pre: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """log sum_k w_k N(x; m_k, P_k) (normalised density, (B, n)) and its gradient (B, n, d) for
    batched X (B, n, d), parameters (B, K, ...); ``pre`` = precision(P) when already computed."""
    Pinv, logdet = precision(P) if pre is None else pre            # (B, K, d, d), (B, K)
    diff = X[:, :, None, :] - m[:, None, :, :]                    # (B, n, K, d)
    sol = np.einsum("bkde,bnke->bnkd", Pinv, diff)
    logp = -0.5 * (diff * sol).sum(-1) - 0.5 * logdet[:, None, :] + np.log(w)[:, None, :]
    mx = logp.max(-1, keepdims=True)
    logp -= mx
    r = np.exp(logp)
    tot = r.sum(-1, keepdims=True)
    r /= tot
    logpdf = (mx + np.log(tot))[..., 0] - 0.5 * X.shape[-1] * math.log(2 * math.pi)
    return logpdf, -(r[..., None] * sol).sum(2)


def mixture_score(X: np.ndarray, w: np.ndarray, m: np.ndarray, P: np.ndarray,
                  pre: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """grad log sum_k w_k N(x; m_k, P_k) for batched X (B, n, d), parameters (B, K, ...)."""
    return mixture_logp_score(X, w, m, P, pre)[1]


def propagate(rng, X: np.ndarray, F: np.ndarray, u: np.ndarray, q: np.ndarray) -> np.ndarray:
    """One transition for batched particles X (B, n, d): F x + u + q * noise (F (B,d,d), u (B,d), q (B,));
    ``rng``: a Generator or a batch.SeedRngs (every seed's rows from its own generator)."""
    return X @ F.transpose(0, 2, 1) + u[:, None, :] + q[:, None, None] * rng.standard_normal(X.shape)


def pf_weights(X: np.ndarray, y: np.ndarray, H: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Normalised bootstrap weights N(y; H x, r^2 I) for batched particles, (B, n)."""
    innov = y[:, None, :] - X @ H.transpose(0, 2, 1)
    logw = -0.5 * (innov ** 2).sum(-1) / (r[:, None] ** 2)
    logw -= logw.max(1, keepdims=True)
    wt = np.exp(logw)
    return wt / wt.sum(1, keepdims=True)


def systematic_resample(rng, W: np.ndarray) -> np.ndarray:
    """Indices (B, n) of systematic resampling of each row of weights W (B, n); ``rng``: a
    Generator or a batch.SeedRngs."""
    B, n = W.shape
    pos = (rng.random((B, 1)) + np.arange(n)[None, :]) / n
    cdf = np.cumsum(W, axis=1)
    cdf[:, -1] = 1.0
    return np.minimum(np.stack([np.searchsorted(cdf[b], pos[b]) for b in range(B)]), n - 1)
