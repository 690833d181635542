"""The study's problems, generated from a verdict seed (each seed its own problems and draws).

Online, ``online_task = "fresh"`` (the study's task): one environment per run s, shared by every
radius and arm, so every UCB variant meets the same items and the same choice noise:
  * theta*_s = B * dir_s with dir_s uniform on the unit sphere, for every radius B;
  * every round t: N fresh items, features uniform in the unit ball of R^dim (so |x' theta*| <= B),
    revenues uniform in [revenue_low, revenue_high], and one uniform number that decides the
    customer's choice by inverse CDF (common random numbers across arms).
``runs`` such runs per verdict seed.

``online_task = "canonical"`` (tried in calibration, benchmarks/mnl_assortment/calibration.py):
the canonical N-item MNL problem the abstract reduces to, a fixed catalogue of N items with
one-hot features x_i = e_i (d = N), so item i's utility is theta*_i = B s_i with s_i uniform in
[-1, 1] (every utility in [-B, B], the range Oh & Iyengar's kappa is the worst case of), fixed
revenues, and one choice uniform a round.

Offline (per radius, ``offline_instances`` problems): N items with features in the unit ball,
theta* = B dir; S* its optimal assortment; a behaviour policy that shows one habitual full
assortment S_b != S* w.p. 1 - explore and a uniform full assortment otherwise (so S* is logged
w.p. explore / C(N, K), about 1 in 2000 rounds by default); ``offline_reps`` logged data sets of
the largest n per problem, their choices drawn from the true model.
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


def online_dim(p) -> int:
    """The online feature dimension: N for the canonical problem (one-hot), ``dim`` for fresh items."""
    return p.n_items if p.online_task == "canonical" else p.dim


def online_env(p, seed: int, assortments: np.ndarray) -> dict:
    """Arrays of one verdict seed's online experiment: ``feats`` (T, S, N, d), ``revs`` (T, S, N),
    ``uniforms`` (T, S), ``dirs`` (S, d) (theta* = B dirs), ``radii``, and ``best_rev`` /
    ``best_idx`` (radius, T, S), the per-round optimal expected revenue and assortment
    (enumeration). For the canonical problem the per-round arrays are read-only broadcast views of
    the fixed catalogue (no copy per round)."""
    rng = np.random.default_rng([seed, RNG_ONLINE])
    T, S, N = p.horizon, p.runs, p.n_items
    radii = np.array(p.radii, dtype=float)
    if p.online_task == "canonical":
        dirs = rng.uniform(-1.0, 1.0, size=(S, N))                          # theta* / B
        revs1 = rng.uniform(p.revenue_low, p.revenue_high, size=(S, N))
        uniforms = rng.uniform(size=(T, S))
        feats = np.broadcast_to(np.eye(N), (T, S, N, N))
        revs = np.broadcast_to(revs1, (T, S, N))
        lr = log_revenue(radii[:, None, None] * dirs[None], revs1, assortments)   # (radius, S, M)
        best_idx = np.broadcast_to(np.argmax(lr, -1)[:, None, :], (len(radii), T, S))
        best_rev = np.broadcast_to(np.exp(np.max(lr, -1))[:, None, :], (len(radii), T, S))
        return {"dirs": dirs, "feats": feats, "revs": revs, "uniforms": uniforms, "radii": radii,
                "best_rev": best_rev, "best_idx": best_idx}
    d = p.dim
    dirs = unit_sphere(rng, S, d)
    feats = unit_ball(rng, (T, S, N), d)
    revs = rng.uniform(p.revenue_low, p.revenue_high, size=(T, S, N))
    uniforms = rng.uniform(size=(T, S))
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


def online_problems(on: dict) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """(utilities, revenues, enumerated optimal revenue) of every online (radius, run) problem
    at round 0 (the canonical catalogue is the same every round)."""
    out = []
    for b, B in enumerate(on["radii"]):
        for s in range(on["dirs"].shape[0]):
            out.append((on["feats"][0, s] @ (B * on["dirs"][s]), np.asarray(on["revs"][0, s]),
                        float(on["best_rev"][b, 0, s])))
    return out


def compact_online(on: dict) -> dict:
    """The arrays to store of an online experiment: a fixed catalogue (the canonical problem: the
    per-round arrays are broadcast views) is stored once, not once a round (``fixed`` = 1)."""
    fixed = on["feats"].strides[0] == 0
    out = {"fixed": np.array(int(fixed)), "dirs": on["dirs"], "uniforms": on["uniforms"], "radii": on["radii"]}
    for k in ("feats", "revs"):
        out[k] = np.ascontiguousarray(on[k][0]) if fixed else on[k]
    for k in ("best_rev", "best_idx"):
        out[k] = np.ascontiguousarray(on[k][:, 0]) if fixed else on[k]
    return out


def expand_online(stored: dict) -> dict:
    """:func:`compact_online`'s arrays back as :func:`online_env` returns them."""
    if not int(stored["fixed"]):
        return {k: v for k, v in stored.items() if k != "fixed"}
    T = stored["uniforms"].shape[0]
    out = {k: stored[k] for k in ("dirs", "uniforms", "radii")}
    out["feats"] = np.broadcast_to(stored["feats"], (T,) + stored["feats"].shape)
    out["revs"] = np.broadcast_to(stored["revs"], (T,) + stored["revs"].shape)
    for k in ("best_rev", "best_idx"):
        v = stored[k]
        out[k] = np.broadcast_to(v[:, None, :], (v.shape[0], T, v.shape[1]))
    return out


ONLINE_RUN_AXIS = {"dirs": 0, "feats": 1, "revs": 1, "uniforms": 1, "best_rev": 2, "best_idx": 2}


def stack_online(envs: list[dict]) -> dict:
    """Several verdict seeds' online problems as one: their runs side by side (seed after seed)
    along the run axis of every array, for one batched simulation; ``radii`` must agree."""
    first = envs[0]
    for e in envs[1:]:
        if not np.array_equal(e["radii"], first["radii"]):
            raise ValueError("the seeds' online problems have different radii")
    out = {k: np.concatenate([e[k] for e in envs], axis=ax) for k, ax in ONLINE_RUN_AXIS.items()}
    out["radii"] = first["radii"]
    return out


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


OFFLINE_INSTANCE_AXIS = {"x": 1, "r": 1, "theta": 1, "star": 1, "star_rev": 1, "rev_all": 1, "habitual": 1,
                         "logged": 1, "choices": 1}


def stack_offline(envs: list[dict]) -> dict:
    """Several verdict seeds' offline problems as one: their instances side by side (seed after
    seed) along the instance axis, for one batched sweep."""
    return {k: np.concatenate([e[k] for e in envs], axis=ax) for k, ax in OFFLINE_INSTANCE_AXIS.items()}
