"""A 2-D light-dark POMDP (Platt et al. 2010 style) with a bimodal initial belief, run for
many episodes at once, with the belief tracked by a particle filter, SVGD or ESCORT and one
fixed policy that reads the belief.

* State s in R^2, start drawn from 1/2 N((x0, +y0), s0^2 I) + 1/2 N((x0, -y0), s0^2 I), which is
  also the initial belief. Goal at the origin.
* Action u in R^2 with |u| <= max_step; s' = s + u + N(0, q^2 I).
* Observation o = s + N(0, sigma(s)^2 I), sigma(s) = noise_scale (light_x - s_1)^2 + noise_min:
  precise near the light (s_1 = light_x), useless far from it.
* Policy (the same for every belief method): belief mean mu and spread sqrt(tr Cov). Spread above
  ``spread_threshold``: head for the light at (light_x, mu_2); else head for the goal, and
  declare when |mu| < declare_radius. Declaring ends the episode with +terminal_reward if the
  true state is within goal_radius of the goal, else -terminal_reward; every move costs
  step_cost; an episode that has not declared after ``horizon`` moves gets -terminal_reward.
* Belief updates. Particle filter: bootstrap (propagate, weight by the likelihood, systematic
  resampling). SVGD / ESCORT: propagate, then Stein iterations toward the posterior
  p(o | x) * predictive(x), where the predictive density is the mixture
  1/n sum_j N(x; x_j + u, diag(q^2 + h^2)) of the propagated previous particles, h = Silverman's
  bandwidth per coordinate (n^(-1/6) times the marginal std) -- a smoothed predictive, as in Stein
  particle filters (without the smoothing the predictive is n spikes of width q).
"""
from __future__ import annotations

import numpy as np

from .mixture import systematic_resample
from .stein import SteinConfig, stein_update


def obs_std(s1: np.ndarray, lp) -> np.ndarray:
    return lp.noise_scale * (lp.light_x - s1) ** 2 + lp.noise_min


def loglik(X: np.ndarray, o: np.ndarray, lp) -> np.ndarray:
    """log p(o | x) up to a constant, X (E, n, 2), o (E, 2) -> (E, n)."""
    sig = obs_std(X[..., 0], lp)
    r2 = ((o[:, None, :] - X) ** 2).sum(-1)
    return -0.5 * r2 / sig ** 2 - 2.0 * np.log(sig)


def loglik_grad(X: np.ndarray, o: np.ndarray, lp) -> np.ndarray:
    """grad_x log p(o | x), (E, n, 2)."""
    sig = obs_std(X[..., 0], lp)
    dsig = -2.0 * lp.noise_scale * (lp.light_x - X[..., 0])
    r = o[:, None, :] - X
    r2 = (r ** 2).sum(-1)
    g0 = r[..., 0] / sig ** 2 + (r2 / sig ** 3 - 2.0 / sig) * dsig
    g1 = r[..., 1] / sig ** 2
    return np.stack([g0, g1], -1)


def predictive_score(X: np.ndarray, C: np.ndarray, tau2: np.ndarray) -> np.ndarray:
    """grad log 1/n sum_j N(x; C_j, diag(tau2)) at X (E, n, 2); C (E, n, 2), tau2 (E, 2).
    The (E, n, n) arrays are built coordinate by coordinate and reused in place: the same sums,
    without (E, n, n, 2) temporaries."""
    E, n, dim = X.shape
    D2, tmp = np.empty((E, n, n)), np.empty((E, n, n))
    for c in range(dim):                                            # sum_c (x_c - C_c)^2 / tau2_c
        term = D2 if c == 0 else tmp
        np.subtract(X[:, :, None, c], C[:, None, :, c], out=term)
        np.square(term, out=term)
        np.divide(term, tau2[:, None, None, c], out=term)
        if c:
            D2 += term
    L = np.multiply(D2, -0.5, out=D2)
    L -= L.max(-1, keepdims=True)
    R = np.exp(L, out=L)
    R /= R.sum(-1, keepdims=True)
    return (R @ C - X) / tau2[:, None, :]


def policy(X: np.ndarray, W: np.ndarray, lp) -> tuple[np.ndarray, np.ndarray]:
    """Action (E, 2) and declare flag (E,) from weighted particle beliefs."""
    mu = (W[..., None] * X).sum(1)
    var = (W[..., None] * (X - mu[:, None, :]) ** 2).sum(1)
    spread = np.sqrt(var.sum(-1))
    localized = spread < lp.spread_threshold
    target = np.where(localized[:, None], 0.0, np.stack([np.full(len(mu), lp.light_x), mu[:, 1]], -1))
    u = target - mu
    norm = np.linalg.norm(u, axis=-1, keepdims=True)
    u = u * np.minimum(1.0, lp.max_step / np.maximum(norm, 1e-12))
    declare = localized & (np.linalg.norm(mu, axis=-1) < lp.declare_radius)
    return u, declare


def run_episodes(method: str, lp, cfg: SteinConfig | None, seeds, progress=None) -> dict:
    """Run ``lp.episodes`` episodes per verdict seed with one belief method, every seed's episodes
    in one batch (each seed's draws from its own generators, as when it runs alone); returns
    ``{seed: {"returns", "success", "steps", "declared" (per episode), "mean_error"}}``."""
    from .batch import SeedRngs

    seeds = list(seeds)
    E1, n = lp.episodes, lp.particles
    E = E1 * len(seeds)
    counts = [E1] * len(seeds)
    rng_env = SeedRngs.of(seeds, counts, 1)             # same true states / noises for every method
    rng_bel = SeedRngs.of(seeds, counts, 2, ["pf", "svgd", "escort"].index(method))
    owner = rng_env.owner                                # the seed (index) of every episode
    signs = np.where(rng_env.random(E) < 0.5, 1.0, -1.0)
    s = np.stack([np.full(E, lp.x0), signs * lp.y0], -1) + lp.s0 * rng_env.standard_normal((E, 2))
    sign_b = np.where(rng_bel.random((E, n)) < 0.5, 1.0, -1.0)
    X = np.stack([np.full((E, n), lp.x0), sign_b * lp.y0], -1) + lp.s0 * rng_bel.standard_normal((E, n, 2))
    W = np.full((E, n), 1.0 / n)
    ret = np.zeros(E)
    done = np.zeros(E, dtype=bool)
    success = np.zeros(E, dtype=bool)
    steps = np.zeros(E, dtype=int)
    err = []                                             # |belief mean - state| per live episode and step
    for t in range(lp.horizon):
        u, declare = policy(X, W, lp)
        dec = declare & ~done
        ok = np.linalg.norm(s, axis=-1) < lp.goal_radius
        ret[dec] += np.where(ok[dec], lp.terminal_reward, -lp.terminal_reward)
        success |= dec & ok
        done |= dec
        live = ~done
        if not live.any():
            break
        ret[live] -= lp.step_cost
        steps[live] += 1
        noise = rng_env.standard_normal((E, 2))
        onoise = rng_env.standard_normal((E, 2))
        s = np.where(live[:, None], s + u + lp.q * noise, s)
        o = s + obs_std(s[:, 0], lp)[:, None] * onoise
        # belief update on every episode (finished ones are ignored afterwards)
        C = X + u[:, None, :]
        Xp = C + lp.q * rng_bel.standard_normal(X.shape)
        if method == "pf":
            lw = np.log(np.maximum(W, 1e-300)) + loglik(Xp, o, lp)
            lw -= lw.max(1, keepdims=True)
            W = np.exp(lw)
            W /= W.sum(1, keepdims=True)
            idx = systematic_resample(rng_bel, W)
            X = np.take_along_axis(Xp, idx[..., None], axis=1)
            W = np.full((E, n), 1.0 / n)
        else:
            # only the episodes still running are updated (finished ones keep their belief)
            Cl, ol = C[live], o[live]
            h = n ** (-1.0 / 6.0) * Cl.std(1)                   # Silverman, per coordinate (E, 2)
            tau2 = lp.q ** 2 + h ** 2

            def score(Y, o=ol, C=Cl, tau2=tau2):
                return loglik_grad(Y, o, lp) + predictive_score(Y, C, tau2)

            X = Xp.copy()
            X[live] = stein_update(Xp[live], score, cfg, X_pred=Xp[live])
        mu = (W[..., None] * X).sum(1)
        err.append((np.linalg.norm(mu - s, axis=-1)[live], owner[live]))
        if progress is not None:
            progress.update(1)
    ret[~done] -= lp.terminal_reward
    out = {}
    for i, seed in enumerate(seeds):
        rows = owner == i
        e = np.concatenate([v[o == i] for v, o in err]) if err else np.zeros(0)   # step by step
        out[seed] = {"returns": ret[rows], "success": success[rows], "steps": steps[rows], "declared": done[rows],
                     "mean_error": float(e.mean()) if len(e) else 0.0}
    return out
