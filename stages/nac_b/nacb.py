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
"""
from __future__ import annotations

import math
from dataclasses import dataclass

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
                epochs_exponent: float = 0.5) -> RunSet:
    """Broadcast scalars/arrays to one RunSet (one run per element)."""
    T, B, alpha, beta, gamma = np.broadcast_arrays(np.asarray(T, dtype=np.int64), np.asarray(B, dtype=np.int64),
                                                   np.asarray(alpha, float), np.asarray(beta, float),
                                                   np.asarray(gamma, float))
    if (T < 1).any() or (B < 1).any():
        raise ValueError("T and B must be >= 1")
    T, B, alpha, beta, gamma = (np.atleast_1d(x).copy() for x in (T, B, alpha, beta, gamma))
    return RunSet(T, B, alpha, beta, gamma, epochs_scale, epochs_exponent)


def uniform_stream(rng: np.random.Generator, R: int, T: int, chunk: int = 2048):
    """Per step t: one (R,) array of uniforms in [0, 1), drawn in chunks; each picks the pair
    (action, next state) of its run from the joint law pi(a|s) P(s'|s, a)."""
    for start in range(0, T, chunk):
        U = rng.random((min(chunk, T - start), R))
        yield from U


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def run_nacb(P: np.ndarray, r: np.ndarray, runs: RunSet, rng: np.random.Generator, s0: np.ndarray,
             theta0: np.ndarray | None = None, checkpoints=(), clip: float = 1e6,
             progress: str | None = None) -> dict:
    """Simulate every run of ``runs`` on the MDP (P, r); see the module docstring.

    Returns ``reward`` (R,) total reward over each run's T steps, ``diverged`` (R,) bool (a
    parameter reached the clip), ``curve`` (len(checkpoints), R) cumulative reward of the first t
    steps (NaN where t > T), ``policies`` (len(checkpoints), R, S, A) the policy that plays step
    t, ``epochs`` (K) and ``inner_steps`` (H) of each run.

    Several MDPs can share one call as a disjoint union (block-diagonal P): a run starting in
    one block never leaves it.
    """
    S, A = r.shape
    R = runs.R
    T_max = int(runs.T.max())
    K, H = runs.epochs(), runs.inner_steps()
    B = runs.B
    HB = H * B
    L = 2 * HB                                   # transitions per epoch
    stop = np.minimum(runs.T, K * L)             # learning stops after K epochs (or at T)
    # per-run tables are kept flat, row = run * S + state, so that gathers are plain takes
    base = np.arange(R) * S
    theta = np.zeros((R, S, A)) if theta0 is None else np.array(theta0, dtype=float)
    omega, g_omega = np.zeros((R, S, A)), np.zeros((R, S, A))
    omega_f, g_omega_f = omega.reshape(R * S, A), g_omega.reshape(R * S, A)
    eta, g_eta = np.zeros(R), np.zeros(R)
    zeta, g_zeta = np.zeros((R, S)), np.zeros((R, S))
    zeta_f, g_zeta_f = zeta.reshape(-1), g_zeta.reshape(-1)
    # the policy is fixed within an epoch: cache pi(.|s) and the cumulative joint law of (a, s')
    pi_tab = softmax(theta)                                          # (R, S, A)
    cumQ = np.empty((R, S, A * S))

    def refresh(idx):
        pi_tab[idx] = softmax(theta[idx])
        q = np.cumsum((pi_tab[idx][..., None] * P).reshape(len(idx), S, A * S), axis=-1)
        q[..., -1] = 1.0
        cumQ[idx] = q

    refresh(np.arange(R))
    pi_f, cumQ_f = pi_tab.reshape(R * S, A), cumQ.reshape(R * S, A * S)
    r_f = r.reshape(-1)
    s = np.asarray(s0, dtype=np.int64).copy()
    total = np.zeros(R)
    ck = sorted(int(c) for c in checkpoints)
    ck_set = {c: i for i, c in enumerate(ck)}
    curve = np.full((len(ck), R), np.nan)
    policies = np.full((len(ck), R, S, A), np.nan)
    alpha, beta_B, gamma_B = runs.alpha, runs.beta / B, runs.gamma / B
    T_arr, Bm1 = runs.T, B - 1
    eye_A = np.eye(A)
    stream = uniform_stream(rng, R, T_max)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=T_max, desc=progress, mininterval=2, unit="step", unit_scale=True)
    for t in range(T_max):
        u = next(stream)
        if t in ck_set:                                              # before step t is played
            i = ck_set[t]
            curve[i] = np.where(t <= T_arr, total, np.nan)
            policies[i] = pi_tab
        rs = base + s
        j = (cumQ_f.take(rs, axis=0) <= u[:, None]).sum(axis=1)    # joint index a * S + s'
        np.minimum(j, A * S - 1, out=j)
        a = j // S
        sn = j - a * S
        rew = r_f.take(s * A + a)
        total += rew * (t < T_arr)
        pos = t % L
        learning = t < stop
        critic = learning & (pos < HB)
        npg = learning ^ critic
        end_batch = pos % B == Bm1
        td = rew - eta + zeta_f.take(base + sn) - zeta_f.take(rs)
        # critic: accumulate the batch's average-reward TD(0) gradient, step at the batch's end
        if critic.any():
            mc = critic * 1.0
            g_eta += mc * (eta - rew)
            g_zeta_f[rs] -= mc * td
            idx = np.flatnonzero(critic & end_batch)
            if idx.size:
                w = beta_B[idx]
                eta[idx] = np.clip(eta[idx] - w * g_eta[idx], -clip, clip)
                zeta[idx] = np.clip(zeta[idx] - w[:, None] * g_zeta[idx], -clip, clip)
                g_eta[idx] = 0.0
                g_zeta[idx] = 0.0
        # natural gradient: SGD on (omega . psi - A)^2 / 2, psi = e_s x (e_a - pi(.|s))
        if npg.any():
            psi = eye_A[a] - pi_f.take(rs, axis=0)                   # (R, A)
            err = (omega_f.take(rs, axis=0) * psi).sum(axis=1) - td
            g_omega_f[rs] += (npg * err)[:, None] * psi
            idx = np.flatnonzero(npg & end_batch)
            if idx.size:
                omega[idx] = np.clip(omega[idx] - gamma_B[idx, None, None] * g_omega[idx], -clip, clip)
                g_omega[idx] = 0.0
                idx = idx[pos[idx] == L[idx] - 1]                    # epoch ends: actor step
                if idx.size:
                    theta[idx] = np.clip(theta[idx] + alpha[idx, None, None] * omega[idx], -clip, clip)
                    refresh(idx)
        s = sn
        if bar is not None and (t + 1) % 4096 == 0:
            bar.update(4096)
    if bar is not None:
        bar.update(T_max - bar.n)
        bar.close()
    if T_max in ck_set:
        i = ck_set[T_max]
        curve[i] = np.where(T_max <= T_arr, total, np.nan)
        policies[i] = pi_tab
    big = 0.999 * clip
    diverged = ((np.abs(theta) >= big).any(axis=(1, 2)) | (np.abs(omega) >= big).any(axis=(1, 2))
                | (np.abs(zeta) >= big).any(axis=1) | (np.abs(eta) >= big))
    return {"reward": total, "diverged": diverged, "curve": curve, "policies": policies,
            "epochs": K, "inner_steps": H, "checkpoints": np.array(ck, dtype=np.int64)}
