"""NAC-B (natural actor-critic with batching, Ganesh & Aggarwal, arXiv 2505.19986), vectorised
over many independent runs on one finite MDP, each with its own horizon, batch size and steps.

One run interacts with the MDP along a single trajectory of T steps (no resets) from a
transient start state. Its T steps are cut into K = ceil(epochs_scale * T^epochs_exponent)
epochs (the actor steps; ceil(sqrt T) by default). Epoch k, with the policy pi_theta_k fixed:

1. critic, H batched steps: with xi = (eta, zeta) (average reward and linear value weights,
   V(s) = zeta . phi(s)), each step averages over the next B transitions
   ``g_eta = eta - r``, ``g_zeta = -(r - eta + V(s') - V(s)) phi(s)`` (average-reward TD(0))
   and sets ``xi <- xi - beta * mean(g)``;
2. natural gradient, H batched steps: with the TD advantage estimate
   ``A = r - eta + V(s') - V(s)`` and the compatible features ``psi = grad log pi(a|s)``, each
   step averages ``(omega . psi - A) psi`` over the next B transitions and sets
   ``omega <- omega - gamma * mean`` (SGD on the compatible-function-approximation loss);
3. actor: ``theta <- theta + alpha * omega``.

So H = floor(T / (2 K B)) and an epoch uses 2 H B transitions; the few samples left after the
K-th epoch are played with the final policy. The actor is a softmax over linear features; with
the one-hot features used here (phi(s) = e_s, features of (s, a) = e_s x e_a) that is the
tabular softmax, and psi(s, a) = e_s x (e_a - pi(.|s)).

Choices where the stored description of the paper is silent (its algorithm box was not in the
reference material; the abstract fixes actor-critic with batching, natural gradient, linear
critic, single trajectory): the critic and the NPG estimate are warm-started across epochs
(xi and omega carry over); the critic and the NPG phases use disjoint consecutive samples; step
sizes are constants (not functions of T); parameters are clipped to +-``clip`` so that a
diverging run (counted in ``diverged``) stays finite and keeps acting.

Regret(T) = T J* - sum_{t<T} r_t. The uniform policy is the run with theta = 0 and alpha = 0.

Arms without the natural gradient (``RunSet.natural`` False, the plain actor-critic): the same
critic, and in the second phase the policy-gradient estimate itself, the mean of ``A psi`` over
the phase's H B transitions (no omega, no SGD), so that ``theta <- theta + alpha * mean(A psi)``.

Seeds as a batch dimension: runs of several verdict seeds share one simulation. Each run names
its MDP in a stack of same-sized MDPs (``mdp``: an index into ``P`` of shape (M, S, A, S)), and
each seed's runs draw their uniforms from that seed's own generator (``rng`` a list of
``(generator, runs)`` groups in run order), so a run's figures do not depend on which other seeds
share its simulation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class RunSet:
    """Per-run settings (arrays of one length R)."""

    T: np.ndarray          # horizon
    B: np.ndarray          # batch size
    alpha: np.ndarray      # actor step
    beta: np.ndarray       # critic step
    gamma: np.ndarray      # NPG (SGD) step
    epochs_scale: float = 1.0
    epochs_exponent: float = 0.5
    natural: np.ndarray = field(default=None)   # bool: natural gradient (True) or plain policy gradient

    @property
    def R(self) -> int:
        return len(self.T)

    def epochs(self) -> np.ndarray:
        """K = ceil(epochs_scale * T^epochs_exponent), the number of actor steps of each run."""
        return np.array([max(1, math.ceil(self.epochs_scale * float(t) ** self.epochs_exponent - 1e-9))
                         for t in self.T], dtype=np.int64)

    def inner_steps(self) -> np.ndarray:
        """H = floor(T / (2 K B)) batched critic (and NPG) steps an epoch (at least 1)."""
        return np.maximum(1, np.asarray(self.T) // (2 * self.epochs() * np.asarray(self.B)))


def make_runset(T, B, alpha, beta, gamma, epochs_scale: float = 1.0,
                epochs_exponent: float = 0.5, natural=True) -> RunSet:
    """Broadcast scalars/arrays to one RunSet (one run per element)."""
    T, B, alpha, beta, gamma, natural = np.broadcast_arrays(
        np.asarray(T, dtype=np.int64), np.asarray(B, dtype=np.int64), np.asarray(alpha, float),
        np.asarray(beta, float), np.asarray(gamma, float), np.asarray(natural, dtype=bool))
    if (T < 1).any() or (B < 1).any():
        raise ValueError("T and B must be >= 1")
    T, B, alpha, beta, gamma, natural = (np.atleast_1d(x).copy() for x in (T, B, alpha, beta, gamma, natural))
    return RunSet(T, B, alpha, beta, gamma, epochs_scale, epochs_exponent, natural)


def concat_runsets(parts: list[RunSet]) -> RunSet:
    """One RunSet of the runs of several (same epochs_scale and epochs_exponent), in order."""
    scale, expo = parts[0].epochs_scale, parts[0].epochs_exponent
    if any(p.epochs_scale != scale or p.epochs_exponent != expo for p in parts):
        raise ValueError("concat_runsets needs one epoch schedule")
    return RunSet(*(np.concatenate([getattr(p, k) for p in parts]) for k in ("T", "B", "alpha", "beta", "gamma")),
                  scale, expo, np.concatenate([p.natural for p in parts]))


def uniform_stream(rng, R: int, T: int, chunk: int = 2048):
    """Per step t: one (R,) array of uniforms in [0, 1), drawn in chunks; each picks the pair
    (action, next state) of its run from the joint law pi(a|s) P(s'|s, a).

    ``rng`` is one generator for all R runs, or a list of ``(generator, n)`` groups (in run order,
    the n summing to R): each group's columns come from its own generator, so a group's draws are
    the same whatever groups share the stream (a chunk is drawn row by row, so a shorter last
    chunk holds the first rows of a longer one)."""
    groups = [(rng, R)] if isinstance(rng, np.random.Generator) else list(rng)
    if sum(n for _, n in groups) != R:
        raise ValueError(f"the rng groups hold {sum(n for _, n in groups)} runs, not {R}")
    for start in range(0, T, chunk):
        c = min(chunk, T - start)
        U = groups[0][0].random((c, groups[0][1])) if len(groups) == 1 else np.concatenate(
            [g.random((c, n)) for g, n in groups], axis=1)
        yield from U


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def flat_view(a: np.ndarray, shape: tuple) -> np.ndarray:
    """``a`` reshaped to ``shape`` as a view (writes go through to ``a``); raises AttributeError
    where that needs a copy (a non-contiguous ``a``)."""
    v = a.view()
    v.shape = shape
    return v


def run_nacb(P: np.ndarray, r: np.ndarray, runs: RunSet, rng, s0: np.ndarray,
             theta0: np.ndarray | None = None, checkpoints=(), clip: float = 1e6,
             progress: str | None = None, mdp: np.ndarray | None = None) -> dict:
    """Simulate every run of ``runs`` on its MDP; see the module docstring.

    ``P`` (S, A, S) and ``r`` (S, A) for one MDP, or (M, S, A, S) and (M, S, A) for a stack of
    them, run i playing MDP ``mdp[i]`` (default 0). ``rng``: a generator, or ``(generator, n)``
    groups (:func:`uniform_stream`).

    Returns ``reward`` (R,) total reward over each run's T steps, ``diverged`` (R,) bool (a
    parameter reached the clip), ``curve`` (len(checkpoints), R) cumulative reward of the first t
    steps (NaN where t > T), ``policies`` (len(checkpoints), R, S, A) the policy that plays step
    t, ``epochs`` (K) and ``inner_steps`` (H) of each run.

    Internally the runs are ordered by decreasing T, and a run stops being simulated after its
    own T steps (the arrays are cut to the runs still going, as views): every run's uniforms
    still come from its own column of the stream, so its figures are those of a run alone.
    """
    P, r = np.asarray(P, float), np.asarray(r, float)
    if P.ndim == 3:
        P, r = P[None], r[None]
    M, S, A = r.shape
    R = runs.R
    mdp = np.zeros(R, dtype=np.int64) if mdp is None else np.asarray(mdp, dtype=np.int64)
    if mdp.shape != (R,) or mdp.min() < 0 or mdp.max() >= M:
        raise ValueError(f"mdp must give each of the {R} runs an MDP index in [0, {M})")
    order = np.argsort(-runs.T, kind="stable")          # longest runs first
    inv = np.empty(R, dtype=np.int64)
    inv[order] = np.arange(R)
    T_arr = runs.T[order]
    mdp = mdp[order]
    T_max = int(T_arr[0])
    K, H = runs.epochs()[order], runs.inner_steps()[order]
    B = runs.B[order]
    HB = H * B
    L = 2 * HB                                   # transitions per epoch
    stop = np.minimum(T_arr, K * L)              # learning stops after K epochs (or at T)
    natural = (np.ones(R, dtype=bool) if runs.natural is None else runs.natural)[order]
    alpha, beta_B, gamma_B = runs.alpha[order], runs.beta[order] / B, runs.gamma[order] / B
    inv_HB = 1.0 / HB
    # per-run tables are kept flat, row = run * S + state, so that gathers are plain takes: every
    # table is C-contiguous and its flat form a view of it (flat_view refuses a copy, which
    # would go stale as the table is updated)
    theta = np.zeros((R, S, A))
    if theta0 is not None:
        theta[:] = np.asarray(theta0, dtype=float)[order]
    omega, g_omega = np.zeros((R, S, A)), np.zeros((R, S, A))
    eta, g_eta = np.zeros(R), np.zeros(R)
    zeta, g_zeta = np.zeros((R, S)), np.zeros((R, S))
    # the policy is fixed within an epoch: cache pi(.|s) and the cumulative joint law of (a, s')
    pi_tab = np.empty((R, S, A))                                     # (R, S, A)
    pi_tab[:] = softmax(theta)
    cumQ = np.empty((R, S, A * S))

    def refresh(idx):
        pi_tab[idx] = softmax(theta[idx])
        q = np.cumsum((pi_tab[idx][..., None] * P[mdp[idx]]).reshape(len(idx), S, A * S), axis=-1)
        q[..., -1] = 1.0
        cumQ[idx] = q

    refresh(np.arange(R))
    r_f = r.reshape(-1)
    r_base = mdp * (S * A)
    s = np.asarray(s0, dtype=np.int64)[order].copy()
    total = np.zeros(R)
    ck = sorted(int(c) for c in checkpoints)
    ck_set = {c: i for i, c in enumerate(ck)}
    curve = np.full((len(ck), R), np.nan)
    policies = np.full((len(ck), R, S, A), np.nan)
    eye_A = np.eye(A)
    stream = uniform_stream(rng, R, T_max)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=T_max, desc=progress, mininterval=2, unit="step", unit_scale=True)
    # segments of steps in which the same runs are still going (the first n of the order)
    ends = sorted(set(T_arr.tolist()), reverse=True)
    t = 0
    for seg_end in sorted(ends):
        n = int((T_arr >= seg_end).sum())                # runs with T >= seg_end play steps < seg_end
        base = np.arange(n) * S
        th, om, g_om, pi_n = theta[:n], omega[:n], g_omega[:n], pi_tab[:n]
        om_f, g_om_f = flat_view(om, (n * S, A)), flat_view(g_om, (n * S, A))
        et, g_et, ze, g_ze = eta[:n], g_eta[:n], zeta[:n], g_zeta[:n]
        ze_f, g_ze_f = flat_view(ze, (n * S,)), flat_view(g_ze, (n * S,))
        pi_f, cumQ_f = flat_view(pi_n, (n * S, A)), flat_view(cumQ[:n], (n * S, A * S))
        rb, tot, s_n = r_base[:n], total[:n], s[:n]
        Ln, HBn, stop_n, Bm1 = L[:n], HB[:n], stop[:n], B[:n] - 1
        nat, plain = natural[:n], ~natural[:n]
        any_plain = bool(plain.any())
        al, bB, gB, iHB = alpha[:n], beta_B[:n], gamma_B[:n], inv_HB[:n]
        cols = order[:n]
        while t < seg_end:
            u = next(stream)[cols]
            if t in ck_set:                                          # before step t is played
                i = ck_set[t]
                curve[i, :n] = total[:n]
                policies[i, :n] = pi_n
            rs = base + s_n
            j = (cumQ_f.take(rs, axis=0) <= u[:, None]).sum(axis=1)    # joint index a * S + s'
            np.minimum(j, A * S - 1, out=j)
            a = j // S
            sn = j - a * S
            rew = r_f.take(rb + s_n * A + a)
            tot += rew
            pos = t % Ln
            learning = t < stop_n
            critic = learning & (pos < HBn)
            npg = learning ^ critic
            end_batch = pos % (Bm1 + 1) == Bm1
            td = rew - et + ze_f.take(base + sn) - ze_f.take(rs)
            # critic: accumulate the batch's average-reward TD(0) gradient, step at the batch's end
            if critic.any():
                mc = critic * 1.0
                g_et += mc * (et - rew)
                g_ze_f[rs] -= mc * td
                idx = np.flatnonzero(critic & end_batch)
                if idx.size:
                    w = bB[idx]
                    et[idx] = np.clip(et[idx] - w * g_et[idx], -clip, clip)
                    ze[idx] = np.clip(ze[idx] - w[:, None] * g_ze[idx], -clip, clip)
                    g_et[idx] = 0.0
                    g_ze[idx] = 0.0
            # natural gradient: SGD on (omega . psi - A)^2 / 2, psi = e_s x (e_a - pi(.|s)); plain
            # actor-critic arms accumulate -A psi instead (minus their policy-gradient estimate)
            if npg.any():
                psi = eye_A[a] - pi_f.take(rs, axis=0)               # (n, A)
                err = (om_f.take(rs, axis=0) * psi).sum(axis=1) - td
                if any_plain:
                    err = np.where(nat, err, -td)
                g_om_f[rs] += (npg * err)[:, None] * psi
                idx = np.flatnonzero(npg & end_batch)
                if idx.size:
                    ni = idx[nat[idx]]
                    if ni.size:
                        om[ni] = np.clip(om[ni] - gB[ni, None, None] * g_om[ni], -clip, clip)
                        g_om[ni] = 0.0
                    idx = idx[pos[idx] == Ln[idx] - 1]               # epoch ends: actor step
                    if idx.size:
                        step = om[idx]
                        if any_plain:
                            pg = -g_om[idx] * iHB[idx, None, None]   # mean of A psi over the phase
                            step = np.where(nat[idx, None, None], step, pg)
                            g_om[idx[plain[idx]]] = 0.0
                        th[idx] = np.clip(th[idx] + al[idx, None, None] * step, -clip, clip)
                        refresh(idx)
            s_n[:] = sn
            t += 1
            if bar is not None and t % 4096 == 0:
                bar.update(4096)
    if bar is not None:
        bar.update(T_max - bar.n)
        bar.close()
    for c, i in ck_set.items():                                      # checkpoints at or after a run's end
        done = T_arr <= c
        curve[i, done & (T_arr == c)] = total[done & (T_arr == c)]
        if c == T_max:
            policies[i] = pi_tab
    big = 0.999 * clip
    diverged = ((np.abs(theta) >= big).any(axis=(1, 2)) | (np.abs(omega) >= big).any(axis=(1, 2))
                | (np.abs(zeta) >= big).any(axis=1) | (np.abs(eta) >= big))
    return {"reward": total[inv], "diverged": diverged[inv], "curve": curve[:, inv], "policies": policies[:, inv],
            "epochs": K[inv], "inner_steps": H[inv], "checkpoints": np.array(ck, dtype=np.int64)}
