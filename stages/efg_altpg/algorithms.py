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

Runs are batched: a policy array holds one run per column, (n_seq, R), and every run has its own
tau, step and random generator (its initial policy and its sampled episodes), so runs of several
verdict seeds, steps and starts advance together in one numpy pass (:func:`run_batch`). Every
operation is column-wise (reductions over the sequences of one column, in the same order for any
R), so a run's figures are the same bit for bit whatever else shares its batch
(tests/efg_altpg/test_batch.py). A single policy (n_seq,) is a batch of one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .seqform import SequenceForm, Tree, exploitability

PARAMETRISATIONS = ("direct", "softmax", "npg")


def _cols(a: np.ndarray) -> tuple[np.ndarray, bool]:
    """``a`` as a (n, R) batch, and whether it was a single vector."""
    return (a[:, None], True) if a.ndim == 1 else (a, False)


def _row(v, runs: int) -> np.ndarray:
    """A per-run number (a scalar or R values) as a (1, R) row."""
    return np.broadcast_to(np.asarray(v, dtype=float).reshape(1, -1), (1, runs))


def soft_values(tree: Tree, g: np.ndarray, pi: np.ndarray, tau) -> tuple[np.ndarray, np.ndarray, float | np.ndarray]:
    """Regularized action values Qt (over sequences), infoset values V, and the regularized
    utility ``x . g - tau psi(x)`` of the behavioural policy ``pi`` against payoffs ``g``.
    One run ((n_seq,) arrays, tau a number) or R runs ((n_seq, R), tau a number or R values)."""
    G, one = _cols(g)
    PI, _ = _cols(pi)
    runs = G.shape[1]
    t = _row(tau, runs)
    reg = bool(np.any(t))
    acc = np.array(G, dtype=float, copy=True)
    # log 0 (an action a tau = 0 run has driven to probability 0) enters no regularized run
    logpi = np.log(PI, out=np.zeros(PI.shape), where=PI > 0) if reg else None
    qt = np.zeros(acc.shape)
    v_all = np.empty((tree.n_inf, runs))
    for lv in reversed(range(len(tree.levels))):
        i0, i1, s0, s1, offs, _ = tree.levels[lv]
        q = acc[s0:s1] - t * logpi[s0:s1] if reg else acc[s0:s1]
        qt[s0:s1] = q
        v = tree.block_reduce(PI[s0:s1] * q, np.add, lv)
        v_all[i0:i1] = v
        tree.add_to_parents(acc, lv, v)
    if one:
        return qt[:, 0], v_all[:, 0], float(acc[0, 0])
    return qt, v_all, acc[0].copy()


def block_softmax(tree: Tree, theta: np.ndarray) -> np.ndarray:
    """pi(.|I) = softmax(theta over I's block), for every infoset at once (pi[0] = 1); one
    run (n_seq,) or a batch (n_seq, R)."""
    own = tree.seq_inf[1:]
    e = np.empty(theta.shape)
    e[0] = 0.0
    e[1:] = np.exp(theta[1:] - tree.block_reduce(theta, np.maximum)[own])
    pi = np.empty(theta.shape)
    pi[0] = 1.0
    pi[1:] = e[1:] / tree.block_reduce(e)[own]
    return pi


def project_blocks(tree: Tree, v: np.ndarray, floor: float) -> np.ndarray:
    """Euclidean projection of each infoset's block of ``v`` onto {p : p >= floor, sum p = 1}
    (the sort-based simplex projection of Duchi et al. 2008, shifted by the floor), done for
    all infosets with the same number of actions at once; one run (n_seq,) or a batch (n_seq, R)."""
    V, one = _cols(v)
    out = np.empty(V.shape)
    out[0] = 1.0
    for k, idx in tree.size_groups:
        if k == 2:                                   # closed form: p1 = clip((v1 - v2 + 1) / 2)
            p1 = np.clip(0.5 * (V[idx[:, 0]] - V[idx[:, 1]] + 1.0), floor, 1.0 - floor)
            out[idx[:, 0]] = p1
            out[idx[:, 1]] = 1.0 - p1
            continue
        w = V[idx] - floor                           # (m, k, R)
        radius = 1.0 - k * floor                     # mass left above the floor
        u = -np.sort(-w, axis=1)                     # descending within each infoset
        cs = np.cumsum(u, axis=1)
        rho = (u - (cs - radius) / np.arange(1, k + 1)[None, :, None] > 0).sum(axis=1)   # >= 1 always
        shift = (np.take_along_axis(cs, (rho - 1)[:, None, :], axis=1)[:, 0, :] - radius) / rho
        out[idx] = np.maximum(w - shift[:, None, :], 0.0) + floor
    return out[:, 0] if one else out


def sample_payoffs(sf: SequenceForm, x: np.ndarray, y: np.ndarray, player: int, episodes: int,
                   rng) -> np.ndarray:
    """Unbiased estimate of player ``player``'s payoff vector (A y, or -A^T x) from ``episodes``
    episodes played by the realisation plans (x, y) with chance.

    An episode's outcome is a terminal z with probability chance(z) x[s0(z)] y[s1(z)], so
    sampling terminals from that law *is* playing episodes. The estimate is
    g_hat[s] = mean over episodes of 1{s_i(z) = s} u_i(z) / x_i[s] (importance weight over the
    player's own reach only, which the player knows; every action keeps positive probability).

    One run (x, y of shape (n_seq,), ``rng`` a Generator) or R runs ((n_seq, R), ``rng`` a list
    of R Generators: each run's episodes come from its own generator)."""
    X, one = _cols(x)
    Y, _ = _cols(y)
    rngs = [rng] if one else list(rng)
    runs = X.shape[1]
    cdf = np.cumsum(sf.t_chance[:, None] * X[sf.t_seq[:, 0]] * Y[sf.t_seq[:, 1]], axis=0).T.copy()
    last = len(sf.t_util) - 1
    z = np.stack([np.minimum(np.searchsorted(cdf[r], rngs[r].random(episodes) * cdf[r, -1], side="right"), last)
                  for r in range(runs)])                                  # (R, episodes)
    own = sf.t_seq[z, player]
    util = sf.t_util[z] * (1.0 if player == 0 else -1.0)
    reach = X if player == 0 else Y
    n = sf.trees[player].n_seq
    bins = (own * runs + np.arange(runs)[:, None]).ravel()                # run r's episodes in order
    g = np.bincount(bins, weights=util.ravel(), minlength=n * runs).reshape(n, runs) / (episodes * reach)
    return g[:, 0] if one else g


@dataclass
class Learner:
    """One player's policies in a batch of R runs: ``pi`` (n_seq, R), its logits ``theta`` for
    softmax / NPG, its realisation plans ``x``, and each run's ``tau`` and step ``eta`` (R,)."""

    tree: Tree
    param: str
    tau: np.ndarray
    eta: np.ndarray
    floor: float
    pi: np.ndarray
    theta: np.ndarray | None = None
    x: np.ndarray | None = None

    @classmethod
    def start(cls, tree: Tree, param: str, tau, eta, floor: float, rng, init_scale: float) -> "Learner":
        """Random initial policies: softmax of N(0, init_scale^2) logits (uniform if 0), run r's
        drawn from its generator ``rng[r]`` (one Generator: a batch of one)."""
        if param not in PARAMETRISATIONS:
            raise ValueError(f"parametrisation {param!r}: allowed {PARAMETRISATIONS}")
        rngs = list(rng) if isinstance(rng, (list, tuple)) else [rng]
        runs = len(rngs)
        theta = np.zeros((tree.n_seq, runs))
        if init_scale > 0:
            for r, g in enumerate(rngs):
                theta[:, r] = g.normal(0.0, init_scale, tree.n_seq)
        pi = block_softmax(tree, theta)
        if param == "direct":
            pi = project_blocks(tree, pi, floor)
            theta = None
        tau = np.broadcast_to(np.asarray(tau, dtype=float), (runs,)).copy()
        eta = np.broadcast_to(np.asarray(eta, dtype=float), (runs,)).copy()
        return cls(tree, param, tau, eta, floor, pi, theta, tree.reach(pi))

    def step(self, g: np.ndarray) -> None:
        """One policy-gradient step of every run against its payoff vector (a column of ``g``,
        exact or sampled)."""
        tree = self.tree
        g = g[:, None] if g.ndim == 1 else g            # one payoff vector: a batch of one
        tau, eta = self.tau[None, :], self.eta[None, :]
        qt, v, _ = soft_values(tree, g, self.pi, self.tau)
        if self.param == "npg":
            self.theta = self.theta + eta * qt
        else:
            xpar = self.x[tree.seq_parent]
            if self.param == "direct":
                self.pi = project_blocks(tree, self.pi + eta * xpar * (qt - tau), self.floor)
                self.x = tree.reach(self.pi)
                return
            adv = qt.copy()
            adv[1:] -= v[tree.seq_inf[1:]]
            self.theta = self.theta + eta * xpar * self.pi * adv
        self.theta[1:] -= tree.block_reduce(self.theta, np.maximum)[tree.seq_inf[1:]]
        self.pi = block_softmax(tree, self.theta)
        self.x = tree.reach(self.pi)

    def keep(self, cols: np.ndarray) -> None:
        """Keep only the runs ``cols`` (a run that is done leaves the batch)."""
        self.tau, self.eta = self.tau[cols], self.eta[cols]
        self.pi, self.x = self.pi[:, cols], self.x[:, cols]
        if self.theta is not None:
            self.theta = self.theta[:, cols]


@dataclass
class BatchResult:
    iters: np.ndarray           # rounds at which the exploitability was measured (shared by the runs)
    expl: np.ndarray            # (R, len(iters)): last-iterate exploitability (our sequence-form best responses)
    pis: tuple[np.ndarray, np.ndarray]     # the last policies, (n_seq, R) per player
    avg_expl: np.ndarray | None  # (R, len(iters)): exploitability of the average realisation plans, if asked


@dataclass
class RunResult:
    iters: np.ndarray           # iterations at which the exploitability was measured
    expl: np.ndarray            # last-iterate exploitability (our sequence-form best responses)
    pis: tuple[np.ndarray, np.ndarray]
    avg_expl: np.ndarray | None = None


def _players(sf: SequenceForm, param: str, tau, eta, rngs: list, floor: float, init_scale: float,
             eta_ratio: float = 1.0) -> list[Learner]:
    """Both players' learners. Run r's generator draws player 0's logits, then player 1's: the
    same draws as the run alone, whatever else is in the batch."""
    eta = np.asarray(eta, dtype=float)
    return [Learner.start(sf.trees[0], param, tau, eta, floor, rngs, init_scale),
            Learner.start(sf.trees[1], param, tau, eta * eta_ratio, floor, rngs, init_scale)]


def run_batch(sf: SequenceForm, param: str, tau, eta, iterations: int, rngs, *, floor: float = 1e-3,
              init_scale: float = 1.0, eval_every: int = 1, episodes: int = 0, eta_ratio: float = 1.0,
              average: bool = False, progress=None) -> BatchResult:
    """R runs of regularized alternating policy gradient for ``iterations`` rounds (player 0
    steps, then player 1 against player 0's new policy), run r with tau ``tau[r]``, step
    ``eta[r]`` (player 1: times ``eta_ratio``) and generator ``rngs[r]`` (its initial policies,
    then its sampled episodes). ``tau`` and ``eta`` may be numbers (every run the same).

    The last iterates' exploitability is recorded every ``eval_every`` rounds (and at the end);
    with ``average`` also that of the running average of the realisation plans over rounds 1..t
    (the iterate CFR and no-regret dynamics report)."""
    rngs = list(rngs)
    runs = len(rngs)
    learners = _players(sf, param, tau, eta, rngs, floor, init_scale, eta_ratio)
    x, y = learners[0].x, learners[1].x
    its, ex = [0], [exploitability(sf, x, y)]
    sx = sy = None
    av = [exploitability(sf, x, y)] if average else None
    if average:
        sx, sy = np.zeros(x.shape), np.zeros(y.shape)
    for t in range(1, iterations + 1):
        g0 = sample_payoffs(sf, x, y, 0, episodes, rngs) if episodes else sf.A @ y
        learners[0].step(g0)
        x = learners[0].x
        g1 = sample_payoffs(sf, x, y, 1, episodes, rngs) if episodes else -(sf.AT @ x)
        learners[1].step(g1)
        y = learners[1].x
        if average:
            sx += x
            sy += y
        if t % eval_every == 0 or t == iterations:
            its.append(t)
            ex.append(exploitability(sf, x, y))
            if average:
                av.append(exploitability(sf, sx / t, sy / t))
        if progress is not None:
            progress.update(runs)
    return BatchResult(np.array(its), np.stack(ex, axis=1), (learners[0].pi, learners[1].pi),
                       np.stack(av, axis=1) if average else None)


def rounds_to_target(sf: SequenceForm, param: str, tau, eta, targets, max_iterations: int, rngs, *,
                     floor: float = 1e-3, init_scale: float = 1.0, progress=None) -> np.ndarray:
    """For R runs (tau ``tau[r]``, step ``eta[r]``, generator ``rngs[r]``): the first round whose
    last iterate has exploitability <= ``targets[r]`` (0 if the start already has), or -1 if
    none within ``max_iterations``. The exploitability is measured every round; a run leaves
    the batch once it has hit its target."""
    rngs = list(rngs)
    runs = len(rngs)
    targets = np.broadcast_to(np.asarray(targets, dtype=float), (runs,))
    learners = _players(sf, param, tau, eta, rngs, floor, init_scale)
    hit = np.full(runs, -1, dtype=np.int64)
    alive = np.arange(runs)

    def check(t: int) -> None:
        nonlocal alive
        done = exploitability(sf, learners[0].x, learners[1].x) <= targets[alive]
        if done.any():
            hit[alive[done]] = t
            keep = np.flatnonzero(~done)
            alive = alive[keep]
            for lr in learners:
                lr.keep(keep)

    check(0)
    for t in range(1, max_iterations + 1):
        if not len(alive):
            break
        learners[0].step(sf.A @ learners[1].x)
        learners[1].step(-(sf.AT @ learners[0].x))
        check(t)
        if progress is not None:
            progress.update(len(alive))
    return hit


def run(sf: SequenceForm, param: str, tau: float, eta: float, iterations: int, rng: np.random.Generator,
        *, floor: float = 1e-3, init_scale: float = 1.0, eval_every: int = 1, episodes: int = 0,
        eta_ratio: float = 1.0, average: bool = False, progress=None) -> RunResult:
    """One run of :func:`run_batch` (a batch of one), with 1-D results."""
    res = run_batch(sf, param, tau, eta, iterations, [rng], floor=floor, init_scale=init_scale,
                    eval_every=eval_every, episodes=episodes, eta_ratio=eta_ratio, average=average,
                    progress=progress)
    return RunResult(res.iters, res.expl[0], (res.pis[0][:, 0], res.pis[1][:, 0]),
                     None if res.avg_expl is None else res.avg_expl[0])
