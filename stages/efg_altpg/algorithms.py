"""Regularized alternating policy gradient on the sequence form (Kalogiannis & Farina, NeurIPS 2025).

Each player i maximises its regularized utility over its behavioural policy pi_i:

    U_i(pi_i; pi_-i) = x_i . g_i  -  tau * psi_i(x_i),     x_i = reach(pi_i),

where g_0 = A y and g_1 = -A^T x are the payoffs per own sequence (chance and opponent
folded in) and psi is the *dilated entropy* psi(x) = sum_I x_parent(I) sum_a pi(a|I) log pi(a|I),
strongly convex on the treeplex. Its unique saddle point is an O(tau)-approximate Nash
equilibrium. Players update in turn: player 0 steps against y_t, then player 1 steps against
the *new* x_(t+1) ("alternating").

All three parametrisations use one backward pass (:func:`soft_values`), which gives the
regularized action values Qt(I, a) = g[Ia] + sum_{J below Ia} V(J) - tau log pi(a|I) and
V(I) = sum_a pi(a|I) Qt(I, a):

* ``direct``: pi(.|I) <- Proj_{Delta_floor}(pi(.|I) + eta * dU/dpi(.|I)) with the exact policy
  gradient dU/dpi(a|I) = x(parent(I)) * (Qt(I, a) - tau) and Delta_floor the simplex with every
  probability >= floor (the paper's assumption that all actions stay explored);
* ``softmax``: pi(.|I) = softmax(theta_I), theta <- theta + eta * dU/dtheta with
  dU/dtheta(I, a) = x(parent(I)) * pi(a|I) * (Qt(I, a) - V(I));
* ``npg``: the natural gradient of the softmax policy (the Fisher metric removes the reach
  and the pi factor): theta <- theta + eta * Qt, i.e. pi' ∝ pi^(1 - eta tau) exp(eta Q).

``tau = 0`` gives the unregularized method (the contrast). With ``episodes > 0`` the payoff
vector g_i is replaced by an unbiased estimate from sampled episodes (see :func:`sample_payoffs`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .seqform import SequenceForm, Tree, exploitability

PARAMETRISATIONS = ("direct", "softmax", "npg")


def soft_values(tree: Tree, g: np.ndarray, pi: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Regularized action values Qt (over sequences), infoset values V, and the regularized
    utility ``x . g - tau psi(x)`` of the behavioural policy ``pi`` against payoffs ``g``."""
    acc = np.array(g, dtype=float, copy=True)
    logpi = np.log(pi) if tau else None
    qt = np.zeros(tree.n_seq)
    v_all = np.empty(tree.n_inf)
    for i0, i1, s0, s1, offs, _ in reversed(tree.levels):
        q = acc[s0:s1] - tau * logpi[s0:s1] if tau else acc[s0:s1]
        qt[s0:s1] = q
        v = np.add.reduceat(pi[s0:s1] * q, offs)
        v_all[i0:i1] = v
        np.add.at(acc, tree.parent[i0:i1], v)
    return qt, v_all, float(acc[0])


def block_softmax(tree: Tree, theta: np.ndarray) -> np.ndarray:
    """pi(.|I) = softmax(theta over I's block), for every infoset at once (pi[0] = 1)."""
    z = theta[1:]
    own = tree.seq_inf[1:]
    m = np.maximum.reduceat(z, tree.offsets)
    e = np.exp(z - m[own])
    s = np.add.reduceat(e, tree.offsets)
    pi = np.empty(tree.n_seq)
    pi[0] = 1.0
    pi[1:] = e / s[own]
    return pi


def project_blocks(tree: Tree, v: np.ndarray, floor: float) -> np.ndarray:
    """Euclidean projection of each infoset's block of ``v`` onto {p : p >= floor, sum p = 1}
    (the sort-based simplex projection of Duchi et al. 2008, shifted by the floor), done for
    all infosets with the same number of actions at once."""
    out = np.empty(tree.n_seq)
    out[0] = 1.0
    for k, idx in tree.size_groups:
        if k == 2:                                   # closed form: p1 = clip((v1 - v2 + 1) / 2)
            p1 = np.clip(0.5 * (v[idx[:, 0]] - v[idx[:, 1]] + 1.0), floor, 1.0 - floor)
            out[idx[:, 0]] = p1
            out[idx[:, 1]] = 1.0 - p1
            continue
        w = v[idx] - floor
        radius = 1.0 - k * floor                     # mass left above the floor
        u = -np.sort(-w, axis=1)                     # descending within each infoset
        cs = np.cumsum(u, axis=1)
        rho = (u - (cs - radius) / np.arange(1, k + 1) > 0).sum(axis=1)   # >= 1 always
        shift = (cs[np.arange(len(w)), rho - 1] - radius) / rho
        out[idx] = np.maximum(w - shift[:, None], 0.0) + floor
    return out


def sample_payoffs(sf: SequenceForm, x: np.ndarray, y: np.ndarray, player: int, episodes: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Unbiased estimate of player ``player``'s payoff vector (A y, or -A^T x) from ``episodes``
    episodes played by the realisation plans (x, y) with chance.

    An episode's outcome is a terminal z with probability chance(z) x[s0(z)] y[s1(z)], so
    sampling terminals from that law *is* playing episodes. The estimate is
    g_hat[s] = mean over episodes of 1{s_i(z) = s} u_i(z) / x_i[s] (importance weight over the
    player's own reach only, which the player knows; every action keeps positive probability)."""
    cdf = np.cumsum(sf.t_chance * x[sf.t_seq[:, 0]] * y[sf.t_seq[:, 1]])
    z = np.minimum(np.searchsorted(cdf, rng.random(episodes) * cdf[-1], side="right"), len(cdf) - 1)
    own = sf.t_seq[z, player]
    util = sf.t_util[z] * (1.0 if player == 0 else -1.0)
    reach = x if player == 0 else y
    n = sf.trees[player].n_seq
    return np.bincount(own, weights=util, minlength=n) / (episodes * reach)


@dataclass
class Learner:
    """One player's policy (``pi``, its logits ``theta`` for softmax / NPG, its realisation
    plan ``x``) and update rule."""

    tree: Tree
    param: str
    tau: float
    eta: float
    floor: float
    pi: np.ndarray
    theta: np.ndarray | None = None
    x: np.ndarray | None = None

    @classmethod
    def start(cls, tree: Tree, param: str, tau: float, eta: float, floor: float,
              rng: np.random.Generator, init_scale: float) -> "Learner":
        """A random initial policy: softmax of N(0, init_scale^2) logits (uniform if 0)."""
        if param not in PARAMETRISATIONS:
            raise ValueError(f"parametrisation {param!r}: allowed {PARAMETRISATIONS}")
        theta = rng.normal(0.0, init_scale, tree.n_seq) if init_scale > 0 else np.zeros(tree.n_seq)
        pi = block_softmax(tree, theta)
        if param == "direct":
            pi = project_blocks(tree, pi, floor)
            theta = None
        return cls(tree, param, tau, eta, floor, pi, theta, tree.reach(pi))

    def step(self, g: np.ndarray) -> None:
        """One policy-gradient step against the payoff vector ``g`` (exact or sampled)."""
        tree, tau = self.tree, self.tau
        qt, v, _ = soft_values(tree, g, self.pi, tau)
        if self.param == "npg":
            self.theta = self.theta + self.eta * qt
        else:
            xpar = self.x[tree.seq_parent]
            if self.param == "direct":
                self.pi = project_blocks(tree, self.pi + self.eta * xpar * (qt - tau), self.floor)
                self.x = tree.reach(self.pi)
                return
            adv = qt.copy()
            adv[1:] -= v[tree.seq_inf[1:]]
            self.theta = self.theta + self.eta * xpar * self.pi * adv
        self.theta[1:] -= np.maximum.reduceat(self.theta[1:], tree.offsets)[tree.seq_inf[1:]]
        self.pi = block_softmax(tree, self.theta)
        self.x = tree.reach(self.pi)


@dataclass
class RunResult:
    iters: np.ndarray           # iterations at which the exploitability was measured
    expl: np.ndarray            # last-iterate exploitability (our sequence-form best responses)
    pis: tuple[np.ndarray, np.ndarray]
    hit: dict                   # epsilon -> first iteration with exploitability <= epsilon (or None)


def run(sf: SequenceForm, param: str, tau: float, eta: float, iterations: int, rng: np.random.Generator,
        *, floor: float = 1e-3, init_scale: float = 1.0, eval_every: int = 1, episodes: int = 0,
        eta_ratio: float = 1.0, targets: tuple[float, ...] = (), stop_at_targets: bool = False,
        progress=None) -> RunResult:
    """Regularized alternating policy gradient for ``iterations`` rounds (player 0 steps, then
    player 1 against player 0's new policy). ``eta_ratio`` scales player 1's step.

    The last iterate's exploitability is recorded every ``eval_every`` rounds (and at the
    end); for each epsilon in ``targets`` the first recorded round with exploitability <=
    epsilon is returned (with ``stop_at_targets`` the run ends once every target is hit)."""
    learners = [Learner.start(sf.trees[0], param, tau, eta, floor, rng, init_scale),
                Learner.start(sf.trees[1], param, tau, eta * eta_ratio, floor, rng, init_scale)]
    x, y = learners[0].x, learners[1].x
    its, ex = [0], [exploitability(sf, x, y)]
    hit = {e: (0 if ex[0] <= e else None) for e in targets}
    for t in range(1, iterations + 1):
        g0 = sample_payoffs(sf, x, y, 0, episodes, rng) if episodes else sf.A @ y
        learners[0].step(g0)
        x = learners[0].x
        g1 = sample_payoffs(sf, x, y, 1, episodes, rng) if episodes else -(sf.AT @ x)
        learners[1].step(g1)
        y = learners[1].x
        if t % eval_every == 0 or t == iterations:
            e = exploitability(sf, x, y)
            its.append(t)
            ex.append(e)
            for k in hit:
                if hit[k] is None and e <= k:
                    hit[k] = t
            if stop_at_targets and targets and all(h is not None for h in hit.values()):
                break
        if progress is not None:
            progress.update(1)
    return RunResult(np.array(its), np.array(ex), (learners[0].pi, learners[1].pi), hit)
