"""Posterior over which wall segments an agent knew, given its trajectories.

Likelihood (the navigation model of :mod:`stages.nav_knowledge.world`): for a knowledge set K
(bool per segment), the agent's belief at step t of a trajectory is ``K ∪ O_t`` where ``O_t`` are
the segments seen from the cells visited so far; ``O_t`` does not depend on K, so each
trajectory splits into *segments* j (steps between two sightings of new walls) with a fixed
seen set ``O_j`` and the distance field ``d_{K ∪ O_j}`` to its goal. Step t contributes
``log softmax_v(-beta d(v))`` at the chosen neighbour v.

:class:`Model` caches, per knowledge state, every (trajectory, segment) field as a row of one
matrix and evaluates all steps' log-likelihoods in one numpy expression (rows x candidates);
flipping one wall repairs only the rows where that wall was not yet seen, each with the
incremental planner (:func:`stages.nav_knowledge.planner.repair`), starting from the current state's rows.

Samplers (all over the ``n_walls`` booleans, prior Bernoulli(p_known) each):
* :func:`sis` — sequential importance sampling over the observed steps: particles from the
  prior, reweighted step by step; with ``resample_move`` the particles are resampled
  (systematic) when the ESS falls below ``ess_frac * P`` and rejuvenated by Metropolis single-wall
  flips targeting the posterior given the steps so far; without it, plain SIS (weights = full
  likelihood of prior draws), whose ESS collapses.
* :func:`gibbs` — systematic-scan Gibbs sampler, P(known) Rao-Blackwellised (mean of the exact
  conditionals), the reference.

``Model(..., replanning=False)`` is the ablation the musts' control uses: a *static* navigator that
plans with its knowledge set K alone for the whole walk and never adds the walls it sees (one
segment per trajectory, ``O_j`` empty): the paper's premise that the agent "integrates new
information into their plan as they act" taken out, the rest of the model (softmax over next-step
cost-to-go, the true walls bounding the moves, the prior) unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .planner import INF, dijkstra, repair
from .world import World, observe


@dataclass
class TrajStructure:
    goal: int
    seen: np.ndarray        # (S, n_walls) bool: O_j
    seg: np.ndarray         # (T,) segment of each step
    cand: np.ndarray        # (T, 4) candidate next cells, padded with -1
    chosen: np.ndarray      # (T,) index into cand of the step taken


def structure(world: World, path: list[int], replanning: bool = True) -> TrajStructure:
    """Split a trajectory into seen-set segments and record each step's candidates. Without
    ``replanning`` (the static navigator) nothing seen enters the plan: one segment, ``O`` empty."""
    true_blocked = world.true_blocked()
    seen = np.zeros(world.n_walls, dtype=bool)
    if replanning:
        observe(world, path[0], seen)
    segs = [seen.copy()]
    seg, cand, chosen = [], [], []
    for t in range(len(path) - 1):
        pos, nxt = path[t], path[t + 1]
        cs = [v for v in world.nbrs[pos] if not true_blocked[v]]
        seg.append(len(segs) - 1)
        cand.append(cs + [-1] * (4 - len(cs)))
        chosen.append(cs.index(nxt))
        if replanning and observe(world, nxt, seen):
            segs.append(seen.copy())
    return TrajStructure(path[-1], np.array(segs), np.array(seg, dtype=np.int64),
                         np.array(cand, dtype=np.int64).reshape(-1, 4), np.array(chosen, dtype=np.int64))


@dataclass
class State:
    known: np.ndarray                # (n_walls,) bool
    rows: list[list[float]]          # one distance field per (trajectory, segment)
    mat: np.ndarray                  # (R, N + 1) the same as numpy, last column inf (padding)
    ll: np.ndarray                   # (T_total,) log-likelihood of every step


class Model:
    """The trajectories of one agent in one world, as a likelihood over knowledge sets."""

    def __init__(self, world: World, paths: list[list[int]], beta: float, replanning: bool = True):
        self.world, self.beta, self.replanning = world, float(beta), bool(replanning)
        self.N = world.H * world.W
        self.trajs = [structure(world, p, replanning) for p in paths]
        self.row_traj, self.row_seen = [], []
        step_row, cand, chosen = [], [], []
        for k, tr in enumerate(self.trajs):
            base = len(self.row_traj)
            for j in range(len(tr.seen)):
                self.row_traj.append(k)
                self.row_seen.append(tr.seen[j])
            step_row.append(base + tr.seg)
            cand.append(np.where(tr.cand < 0, self.N, tr.cand))
            chosen.append(tr.chosen)
        self.row_seen = np.array(self.row_seen).reshape(len(self.row_traj), world.n_walls)
        self.step_row = np.concatenate(step_row) if step_row else np.zeros(0, np.int64)
        self.cand = np.concatenate(cand) if cand else np.zeros((0, 4), np.int64)
        self.chosen = np.concatenate(chosen) if chosen else np.zeros(0, np.int64)
        self.traj_of_step = np.concatenate([np.full(len(tr.seg), k) for k, tr in enumerate(self.trajs)]) \
            if self.trajs else np.zeros(0, np.int64)
        self.n_steps = len(self.step_row)
        self.updates = 0                 # incremental repairs done (for the report)
        self.scratch = 0                 # fields computed from scratch

    # --- fields -----------------------------------------------------------------------------
    def _mat(self, rows: list[list[float]]) -> np.ndarray:
        m = np.full((len(rows), self.N + 1), INF)
        m[:, :self.N] = rows
        return m

    def step_ll(self, mat: np.ndarray) -> np.ndarray:
        """Log-likelihood of every step for the fields ``mat`` (R, N+1) or (P, R, N+1)."""
        d = mat[..., self.step_row[:, None], self.cand]             # (..., T, 4)
        logits = -self.beta * d
        m = logits.max(axis=-1, keepdims=True)
        lse = m[..., 0] + np.log(np.exp(logits - m).sum(axis=-1))
        pick = np.take_along_axis(logits, self.chosen[:, None], axis=-1)[..., 0] \
            if logits.ndim == 2 else logits[..., np.arange(self.n_steps), self.chosen]
        return pick - lse

    def state(self, known: np.ndarray) -> State:
        """Every field for ``known`` (the first of each trajectory from scratch, later ones by
        repairing the previous segment's field with the newly seen walls)."""
        known = np.asarray(known, dtype=bool)
        rows = []
        prev_traj, prev_on = -1, None
        for r, k in enumerate(self.row_traj):
            on = known | self.row_seen[r]
            goal = self.trajs[k].goal
            if k != prev_traj:
                field = dijkstra(self.world.nbrs, self.world.blocked(on), goal)
                self.scratch += 1
            else:
                new = np.flatnonzero(on & ~prev_on)
                field = list(rows[-1])
                if new.size:
                    changed = [c for w in new for c in self.world.wall_cells[w]]
                    repair(self.world.nbrs, self.world.blocked(on), goal, field, changed)
                    self.updates += 1
            rows.append(field)
            prev_traj, prev_on = k, on
        mat = self._mat(rows)
        return State(known.copy(), rows, mat, self.step_ll(mat))

    def flipped(self, s: State, w: int) -> State:
        """``s`` with wall ``w``'s knowledge flipped; rows where ``w`` was already seen are shared."""
        known = s.known.copy()
        known[w] = not known[w]
        cells = self.world.wall_cells[w]
        rows = list(s.rows)
        mat = s.mat.copy()
        for r, k in enumerate(self.row_traj):
            if self.row_seen[r, w]:
                continue
            field = list(s.rows[r])
            repair(self.world.nbrs, self.world.blocked(known | self.row_seen[r]),
                       self.trajs[k].goal, field, cells)
            self.updates += 1
            rows[r] = field
            mat[r, :self.N] = field
        return State(known, rows, mat, self.step_ll(mat))

    def traj_ll(self, s: State) -> np.ndarray:
        """Log-likelihood of each trajectory."""
        return np.bincount(self.traj_of_step, weights=s.ll, minlength=len(self.trajs))


# --- samplers --------------------------------------------------------------------------------
def _prior_logit(p_known: float) -> float:
    return float(np.log(p_known) - np.log1p(-p_known))


def ess(logw: np.ndarray) -> float:
    w = np.exp(logw - logw.max())
    w /= w.sum()
    return float(1.0 / np.sum(w * w))


def _normalise(logw: np.ndarray) -> np.ndarray:
    w = np.exp(logw - logw.max())
    return w / w.sum()


def systematic_resample(rng: np.random.Generator, w: np.ndarray) -> np.ndarray:
    P = len(w)
    u = (rng.random() + np.arange(P)) / P
    return np.minimum(np.searchsorted(np.cumsum(w), u), P - 1)


def sis(model: Model, rng: np.random.Generator, particles: int, p_known: float,
        resample_move: bool, ess_frac: float = 0.5, moves: int = 5) -> dict:
    """Sequential importance sampling over the steps (see the module docstring).

    Returns ``p_known`` (n_walls,) posterior means, ``states`` (final particles), ``weights``,
    ``ess_final`` (ESS of the final weights; for plain SIS this is the ESS of the full
    likelihood weights), ``ess_min`` (lowest ESS seen before any resampling step),
    ``resamples`` and ``accept`` (Metropolis acceptance rate).
    """
    nw = model.world.n_walls
    states = [model.state(rng.random(nw) < p_known) for _ in range(particles)]
    lp = _prior_logit(p_known)
    logw = np.zeros(particles)
    ess_min, resamples, acc, props = float(particles), 0, 0, 0
    if not resample_move:
        logw = np.array([s.ll.sum() for s in states])
        ess_min = ess(logw)
    else:
        cum = np.zeros(particles)
        for t in range(model.n_steps):
            step = np.array([s.ll[t] for s in states])
            logw += step
            cum += step
            e = ess(logw)
            ess_min = min(ess_min, e)
            if e < ess_frac * particles and t < model.n_steps:
                idx = systematic_resample(rng, _normalise(logw))
                states = [states[i] for i in idx]
                cum = cum[idx]
                logw = np.zeros(particles)
                resamples += 1
                for i in range(particles):
                    s, c = states[i], cum[i]
                    for w in rng.integers(0, nw, size=moves):
                        new = model.flipped(s, int(w))
                        c_new = new.ll[:t + 1].sum()
                        log_a = c_new - c + (lp if new.known[w] else -lp)
                        props += 1
                        if np.log(rng.random()) < log_a:
                            s, c = new, c_new
                            acc += 1
                    states[i], cum[i] = s, c
    w = _normalise(logw)
    K = np.array([s.known for s in states], dtype=float)
    return {"p_known": w @ K, "states": states, "weights": w, "ess_final": 1.0 / float(np.sum(w * w)),
            "ess_min": ess_min, "resamples": resamples, "accept": acc / props if props else float("nan")}


def gibbs(model: Model, rng: np.random.Generator, p_known: float, sweeps: int, burn: int,
          keep_every: int = 1) -> dict:
    """Systematic-scan Gibbs over the walls from a prior draw; P(known) is the mean of the exact
    conditionals after ``burn`` sweeps; every ``keep_every``-th post-burn state is kept."""
    nw = model.world.n_walls
    lp = _prior_logit(p_known)
    s = model.state(rng.random(nw) < p_known)
    cond_sum = np.zeros(nw)
    kept = []
    for sweep in range(sweeps):
        for w in range(nw):
            other = model.flipped(s, w)
            on, off = (s, other) if s.known[w] else (other, s)
            logit = on.ll.sum() - off.ll.sum() + lp
            p_on = 1.0 / (1.0 + np.exp(-logit))
            if sweep >= burn:
                cond_sum[w] += p_on
            s = on if rng.random() < p_on else off
        if sweep >= burn and (sweep - burn) % keep_every == 0:
            kept.append(s)
    return {"p_known": cond_sum / max(1, sweeps - burn), "states": kept}


def predictive_nll(world: World, paths: list[list[int]], beta: float, knowns: np.ndarray,
                   weights: np.ndarray) -> float:
    """-log sum_i w_i p(paths | K_i): the posterior-predictive NLL of held-out trajectories
    (summed over them, each one's probability mixed over the posterior states separately)."""
    m = Model(world, paths, beta)
    lls = np.array([m.traj_ll(m.state(k)) for k in knowns])        # (P, n_paths)
    logw = np.log(np.maximum(weights, 1e-300))[:, None]
    a = lls + logw
    mx = a.max(axis=0)
    return float(-(mx + np.log(np.exp(a - mx).sum(axis=0))).sum())
