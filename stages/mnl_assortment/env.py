"""The study's problems, generated from the seed.

Online (one environment per seed index s, shared by every radius and both methods, so the two
UCB variants meet the same items and the same choice noise):
  * theta*_s = B * dir_s with dir_s uniform on the unit sphere, for every radius B;
  * every round t: N fresh items, features uniform in the unit ball of R^d (so |x' theta*| <= B),
    revenues uniform in [revenue_low, revenue_high], and one uniform number that decides the
    customer's choice by inverse CDF (common random numbers across methods).

Offline (per radius, ``offline_instances`` problems): N items drawn as above, theta* = B dir;
S* its optimal assortment; a behaviour policy that shows one habitual full assortment S_b != S*
w.p. 1 - explore and a uniform full assortment otherwise (so S* is logged w.p. explore / C(N, K),
about 1 in 2000 rounds by default); ``offline_reps`` logged data sets of the largest n per
problem, their choices drawn from the true model.
"""
from __future__ import annotations

import numpy as np

from .mnl import log_revenue, sample_choices

RNG_ONLINE, RNG_OFFLINE = 1, 2


def unit_ball(rng: np.random.Generator, shape: tuple, d: int) -> np.ndarray:
    """Points uniform in the unit ball of R^d, array of shape ``shape + (d,)``."""
    g = rng.standard_normal(shape + (d,))
    g /= np.linalg.norm(g, axis=-1, keepdims=True)
    return g * rng.uniform(size=shape + (1,)) ** (1.0 / d)


def unit_sphere(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    g = rng.standard_normal((n, d))
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def online_env(p, seed: int, assortments: np.ndarray) -> dict:
    """Arrays of the online experiment; ``best_rev`` / ``best_idx`` (radius, T, seeds) are the
    per-round optimal expected revenue and assortment (enumeration)."""
    rng = np.random.default_rng([seed, RNG_ONLINE])
    T, S, N, d = p.horizon, p.seeds, p.n_items, p.dim
    dirs = unit_sphere(rng, S, d)
    feats = unit_ball(rng, (T, S, N), d)
    revs = rng.uniform(p.revenue_low, p.revenue_high, size=(T, S, N))
    uniforms = rng.uniform(size=(T, S))
    radii = np.array(p.radii, dtype=float)
    best_rev = np.empty((len(radii), T, S))
    best_idx = np.empty((len(radii), T, S), dtype=np.int64)
    for b, B in enumerate(radii):
        for t0 in range(0, T, 250):                       # chunks keep the (t, s, M, K) arrays small
            u = np.einsum("tsnd,sd->tsn", feats[t0:t0 + 250], B * dirs)
            lr = log_revenue(u, revs[t0:t0 + 250], assortments)
            best_idx[b, t0:t0 + 250] = np.argmax(lr, -1)
            best_rev[b, t0:t0 + 250] = np.exp(np.max(lr, -1))
    return {"dirs": dirs, "feats": feats, "revs": revs, "uniforms": uniforms, "radii": radii,
            "best_rev": best_rev, "best_idx": best_idx}


def behaviour_probs(assortments: np.ndarray, n_items: int, capacity: int, habitual: int, explore: float) -> np.ndarray:
    """Probabilities of the behaviour policy over the enumerated assortments."""
    full = (assortments < n_items).sum(1) == capacity
    p = np.where(full, explore / full.sum(), 0.0)
    p[habitual] += 1.0 - explore
    return p


def offline_env(p, seed: int, assortments: np.ndarray) -> dict:
    """Arrays of the offline experiment, leading axes (radius, instance[, replication])."""
    rng = np.random.default_rng([seed, RNG_OFFLINE])
    nb, I, reps, n = len(p.radii), p.offline_instances, p.offline_reps, p.offline_n[-1]
    N, d, K = p.n_items, p.dim, p.capacity
    x = unit_ball(rng, (nb, I, N), d)
    r = rng.uniform(p.revenue_low, p.revenue_high, size=(nb, I, N))
    theta = np.array(p.radii)[:, None, None] * unit_sphere(rng, nb * I, d).reshape(nb, I, d)
    u = np.einsum("bind,bid->bin", x, theta)
    lr = log_revenue(u, r, assortments)
    star = np.argmax(lr, -1)
    full = np.flatnonzero((assortments < N).sum(1) == K)
    habitual = np.empty((nb, I), dtype=np.int64)
    logged = np.empty((nb, I, reps, n), dtype=np.int64)
    for b in range(nb):
        for i in range(I):
            habitual[b, i] = rng.choice(full[full != star[b, i]])
            probs = behaviour_probs(assortments, N, K, habitual[b, i], p.behaviour_explore)
            logged[b, i] = rng.choice(len(assortments), size=(reps, n), p=probs)
    items = assortments[logged]                                       # (b, i, rep, n, K)
    mask = items < N
    up = np.concatenate([u, np.zeros((nb, I, 1))], -1)
    u_offered = np.take_along_axis(up[:, :, None, None, :], items, -1)
    choices = sample_choices(np.where(mask, u_offered, 0.0), mask, rng.uniform(size=(nb, I, reps, n)))
    return {"x": x, "r": r, "theta": theta, "star": star, "star_rev": np.exp(np.max(lr, -1)),
            "rev_all": np.exp(lr), "habitual": habitual, "logged": logged, "choices": choices}
