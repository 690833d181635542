"""The QoS-degradation (QoSD) problem on small undirected graphs, and the solvers that need no
learning: the greedy PATHPERTURB-style baseline, the path-stressing heuristic (our Forge), the
trim step and the repair step.

An instance: an undirected graph with base weights ``w_e > 0``, a source ``s``, a target ``t``, a
threshold ``T`` above the base distance d(s, t), and a per-edge cost ``c_e(delta_e)`` of raising
edge ``e`` by ``delta_e >= 0``. A perturbation is feasible when every s-t path weighs at least
``T`` under ``w + delta`` (checked by Dijkstra, :func:`is_feasible`); we look for the cheapest.

Cost kinds (``a, b, f`` are per-edge parameters of the instance):
- ``linear``       ``a d``
- ``quadratic``    ``a d + b d^2``                 (convex, non-linear)
- ``fixed_charge`` ``f [d > 0] + a d``             (step-like, non-convex, non-linear)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

COSTS = ("linear", "quadratic", "fixed_charge")
NONLINEAR = ("quadratic", "fixed_charge")
FAMILIES = ("grid", "erdos_renyi", "waxman")
TOL = 1e-7          # distances within TOL of T count as reaching T
ACTIVE = 1e-9       # a perturbation above ACTIVE pays the fixed charge


@dataclass
class Instance:
    """One QoSD instance. ``edges`` is an (m, 2) int array of undirected edges (u, v)."""
    name: str
    family: str
    n: int
    edges: np.ndarray
    w: np.ndarray
    s: int
    t: int
    T: float
    kind: str
    a: np.ndarray
    b: np.ndarray
    f: np.ndarray
    _csr: tuple = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.edges = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        for key in ("w", "a", "b", "f"):
            setattr(self, key, np.asarray(getattr(self, key), dtype=float))
        m = len(self.edges)
        if self.kind not in COSTS:
            raise ValueError(f"instance {self.name}: cost kind {self.kind!r} is not one of {COSTS}")
        if any(len(getattr(self, k)) != m for k in ("w", "a", "b", "f")):
            raise ValueError(f"instance {self.name}: w, a, b, f need one value per edge ({m})")
        if (self.w <= 0).any():
            raise ValueError(f"instance {self.name}: base weights must be > 0")
        if not (0 <= self.s < self.n and 0 <= self.t < self.n) or self.s == self.t:
            raise ValueError(f"instance {self.name}: s={self.s}, t={self.t} must be distinct nodes of 0..{self.n - 1}")
        if (self.edges[:, 0] == self.edges[:, 1]).any() or self.edges.min() < 0 or self.edges.max() >= self.n:
            raise ValueError(f"instance {self.name}: edges must join distinct nodes of 0..{self.n - 1}")
        # CSR pattern of the directed arcs (both orientations of every edge), fixed once
        tails = np.concatenate([self.edges[:, 0], self.edges[:, 1]])
        heads = np.concatenate([self.edges[:, 1], self.edges[:, 0]])
        arc_edge = np.concatenate([np.arange(m), np.arange(m)])
        order = np.lexsort((heads, tails))
        indptr = np.searchsorted(tails[order], np.arange(self.n + 1))
        self._csr = (heads[order].astype(np.int32), indptr.astype(np.int32), arc_edge[order])
        self.edge_of = {}
        for e, (u, v) in enumerate(self.edges.tolist()):
            self.edge_of[(u, v)] = self.edge_of[(v, u)] = e

    @property
    def m(self) -> int:
        return len(self.edges)

    def edge_costs(self, delta: np.ndarray) -> np.ndarray:
        """``c_e(delta_e)`` for every edge."""
        d = np.maximum(np.asarray(delta, dtype=float), 0.0)
        if self.kind == "linear":
            return self.a * d
        if self.kind == "quadratic":
            return self.a * d + self.b * d * d
        return self.f * (d > ACTIVE) + self.a * d

    def cost(self, delta: np.ndarray) -> float:
        return float(self.edge_costs(delta).sum())

    def raise_cost(self, e: int, d0: float, x: float) -> float:
        """``c_e(d0 + x) - c_e(d0)``: the cost of raising edge ``e`` from ``d0`` by ``x``."""
        a, b, f = self.a[e], self.b[e], self.f[e]
        if self.kind == "linear":
            return a * x
        if self.kind == "quadratic":
            return a * x + b * ((d0 + x) ** 2 - d0 ** 2)
        return a * x + (f if (d0 <= ACTIVE and d0 + x > ACTIVE) else 0.0)

    def with_kind(self, kind: str) -> "Instance":
        return Instance(f"{self.name.rsplit('/', 1)[0]}/{kind}", self.family, self.n, self.edges, self.w,
                        self.s, self.t, self.T, kind, self.a, self.b, self.f)

    def to_dict(self) -> dict:
        return {"name": self.name, "family": self.family, "n": self.n, "edges": self.edges.tolist(),
                "w": self.w.tolist(), "s": self.s, "t": self.t, "T": self.T, "kind": self.kind,
                "a": self.a.tolist(), "b": self.b.tolist(), "f": self.f.tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> "Instance":
        return cls(d["name"], d["family"], d["n"], d["edges"], d["w"], d["s"], d["t"], d["T"], d["kind"],
                   d["a"], d["b"], d["f"])


# ---------------------------------------------------------------- distances and feasibility
def distances(inst: Instance, weights: np.ndarray, source: int, predecessors: bool = False):
    """Dijkstra (scipy.sparse.csgraph) from ``source`` under per-edge ``weights``."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    indices, indptr, arc_edge = inst._csr
    g = csr_matrix((np.asarray(weights, dtype=float)[arc_edge], indices, indptr), shape=(inst.n, inst.n))
    return dijkstra(g, directed=True, indices=source, return_predecessors=predecessors)


def shortest_path(inst: Instance, delta: np.ndarray) -> tuple[float, list[int]]:
    """The s-t distance under ``w + delta`` and one shortest path as a list of edge indices."""
    dist, pred = distances(inst, inst.w + delta, inst.s, predecessors=True)
    if not np.isfinite(dist[inst.t]):
        raise ValueError(f"instance {inst.name}: t is not reachable from s")
    path, v = [], inst.t
    while v != inst.s:
        u = int(pred[v])
        path.append(inst.edge_of[(u, v)])
        v = u
    return float(dist[inst.t]), path[::-1]


def st_distance(inst: Instance, delta: np.ndarray) -> float:
    return float(distances(inst, inst.w + delta, inst.s)[inst.t])


def is_feasible(inst: Instance, delta: np.ndarray, tol: float = 1e-6) -> bool:
    """Every s-t path weighs at least T under ``w + delta`` (and ``delta >= 0``)."""
    delta = np.asarray(delta, dtype=float)
    return bool((delta >= -tol).all() and st_distance(inst, np.maximum(delta, 0)) >= inst.T - tol)


# ---------------------------------------------------------------- the greedy baseline
def greedy_pathperturb(inst: Instance, delta0: np.ndarray | None = None) -> np.ndarray:
    """PATHPERTURB-style greedy: while the current shortest path is below T, raise its
    cheapest-to-raise edge (least ``c_e(delta_e + need) - c_e(delta_e)``) by the whole ``need``."""
    delta = np.zeros(inst.m) if delta0 is None else np.array(delta0, dtype=float)
    for _ in range(100 * inst.m + 100):
        d, path = shortest_path(inst, delta)
        need = inst.T - d
        if need <= TOL:
            return delta
        e = min(path, key=lambda k: (inst.raise_cost(k, delta[k], need), k))
        delta[e] += need
    raise RuntimeError(f"greedy did not reach T on {inst.name}")


# ---------------------------------------------------------------- Forge: path stressing
def replacement_lengths(inst: Instance, delta: np.ndarray, path: list[int]) -> np.ndarray:
    """For each edge of ``path``: the s-t distance with that edge removed (inf for a bridge)."""
    out = np.empty(len(path))
    base = inst.w + delta
    for i, e in enumerate(path):
        wt = base.copy()
        wt[e] = 1e12
        out[i] = float(distances(inst, wt, inst.s)[inst.t])
    return np.where(out >= 1e11, np.inf, out)


def path_stress(inst: Instance, delta0: np.ndarray | None = None, step_frac: float = 0.05,
                credit: float = 0.25, max_iter: int = 5000) -> np.ndarray:
    """Predictive path stressing (our proxy of the paper's PPS/Forge): while the shortest path is
    below T, raise one of its edges, chosen by the cost per unit of *predicted* gain.

    The gain of raising edge e by x is predicted from the replacement path (the s-t distance
    without e, L_-e): the distance rises by min(x, L_-e - d) now; the rest of x still shortens
    every other path through e, which is credited at ``credit`` per unit. For convex costs a step
    is at most ``step_frac * T`` (so the raise spreads over edges by marginal cost); for linear and
    step-like costs it is the whole need. Always ends feasible (each step raises a path)."""
    delta = np.zeros(inst.m) if delta0 is None else np.maximum(np.array(delta0, dtype=float), 0.0)
    for _ in range(max_iter):
        d, path = shortest_path(inst, delta)
        need = inst.T - d
        if need <= TOL:
            return delta
        repl = replacement_lengths(inst, delta, path)
        best, best_score = None, np.inf
        for e, L in zip(path, repl):
            x = need if inst.kind != "quadratic" else min(need, max(step_frac * inst.T, TOL))
            now = min(x, max(L - d, 0.0))
            gain = now + credit * (x - now)
            score = inst.raise_cost(e, delta[e], x) / max(gain, 1e-12)
            if score < best_score - 1e-12:
                best, best_score = (e, x), score
        e, x = best
        delta[e] += x
    raise RuntimeError(f"path stressing did not reach T on {inst.name}")


def trim(inst: Instance, delta: np.ndarray) -> np.ndarray:
    """Lower each raised edge as far as feasibility allows, costliest first. For edge (u, v) the
    lightest s-t path through it weighs min(ds[u] + w' + dt[v], ds[v] + w' + dt[u]) (ds, dt:
    distances from s and from t; they may use the edge itself, which only under-states the room),
    so it may drop by that minus T. A feasible input stays feasible."""
    delta = np.maximum(np.array(delta, dtype=float), 0.0)
    order = sorted(np.flatnonzero(delta > ACTIVE).tolist(), key=lambda e: (-inst.edge_costs(delta)[e], e))
    for e in order:
        wt = inst.w + delta
        ds, dt = distances(inst, wt, inst.s), distances(inst, wt, inst.t)
        u, v = inst.edges[e]
        through = min(ds[u] + wt[e] + dt[v], ds[v] + wt[e] + dt[u])
        room = min(delta[e], through - inst.T)
        if room > TOL:
            delta[e] = 0.0 if room >= delta[e] - ACTIVE else delta[e] - room
    return delta


def repair(inst: Instance, delta: np.ndarray, step_frac: float = 0.05, credit: float = 0.25) -> np.ndarray:
    """A feasible, trimmed perturbation from any non-negative ``delta``: path stressing from it,
    then :func:`trim`."""
    return trim(inst, path_stress(inst, np.maximum(delta, 0.0), step_frac, credit))


def forge(inst: Instance, step_frac: float = 0.05, credit: float = 0.25) -> np.ndarray:
    """The Forge phase: path stressing from zero, then trim."""
    return repair(inst, np.zeros(inst.m), step_frac, credit)


def greedy_repair(inst: Instance, delta: np.ndarray) -> np.ndarray:
    """The classical baseline's repair: the greedy from any non-negative ``delta``, then
    :func:`trim` (the same trim as Forge's)."""
    return trim(inst, greedy_pathperturb(inst, np.maximum(delta, 0.0)))


def greedy_trim(inst: Instance) -> np.ndarray:
    """The greedy baseline as the claims compare with it: the greedy from zero, then :func:`trim`."""
    return greedy_repair(inst, np.zeros(inst.m))


# ---------------------------------------------------------------- instances
def make_graph(family: str, n: int, rng: np.random.Generator):
    """A connected networkx graph of about ``n`` nodes, relabelled 0..n'-1."""
    import networkx as nx

    seed = int(rng.integers(2**31 - 1))
    for attempt in range(50):
        if family == "grid":
            rows = max(2, int(round(np.sqrt(n * 0.75))))
            g = nx.grid_2d_graph(rows, max(2, int(np.ceil(n / rows))))     # road-like
        elif family == "erdos_renyi":
            g = nx.gnp_random_graph(n, min(1.0, 3.5 / n), seed=seed + attempt)
        elif family == "waxman":
            g = nx.waxman_graph(n, beta=0.5, alpha=0.25, seed=seed + attempt)
        else:
            raise ValueError(f"unknown graph family {family!r}; allowed: {FAMILIES}")
        if g.number_of_nodes() and nx.is_connected(g):
            break
        g = g.subgraph(max(nx.connected_components(g), key=len)).copy()
        if g.number_of_nodes() >= max(4, int(0.7 * n)):
            break
    return nx.convert_node_labels_to_integers(g, ordering="sorted")


def make_instance(name: str, family: str, n: int, tau: float, rng: np.random.Generator,
                  kind: str = "linear") -> Instance:
    """A graph of ``family``, weights U[1, 10], s and t a pair at maximum hop distance, T = tau *
    d(s, t), cost parameters a ~ U[1, 3], b ~ U[0.2, 1], f ~ U[3, 12]."""
    import networkx as nx

    g = make_graph(family, n, rng)
    edges = np.array(sorted((min(u, v), max(u, v)) for u, v in g.edges), dtype=np.int64)
    m = len(edges)
    w = np.round(rng.uniform(1.0, 10.0, m), 1)
    hops = dict(nx.all_pairs_shortest_path_length(g))
    far = max(max(d.values()) for d in hops.values())
    pairs = sorted((u, v) for u, d in hops.items() for v, h in d.items() if h == far and u < v)
    s, t = pairs[int(rng.integers(len(pairs)))]
    a, b, f = rng.uniform(1.0, 3.0, m), rng.uniform(0.2, 1.0, m), rng.uniform(3.0, 12.0, m)
    tmp = Instance(name, family, g.number_of_nodes(), edges, w, int(s), int(t), 1.0, kind, a, b, f)
    d0 = st_distance(tmp, np.zeros(m))
    tmp.T = float(np.round(tau * d0, 3))
    tmp.name = f"{name}/{kind}"
    return tmp


def local_search(inst: Instance, start: np.ndarray, tries: int, rng: np.random.Generator,
                 step_frac: float = 0.05, credit: float = 0.25, fix=None, trace: list | None = None) -> np.ndarray:
    """Improve a feasible ``start`` by random restarts around it: each raised edge is dropped with
    probability 0.3, else scaled by exp(N(0, 0.5^2)); then repaired, by ``fix(inst, delta)`` if
    given, else by :func:`repair` (Forge's path stressing + trim). Keeps the cheapest; ``tries``
    repaired candidates are evaluated. (How the training labels are refined from Forge's
    solutions; with ``tries`` = Refine's samples, the non-generative search at Hephaestus's
    evaluation budget: from Forge, the control ``forge_search``; from the trimmed greedy with
    :func:`greedy_repair`, the classical ``greedy_search``.) ``trace``, if given, gets the best
    cost after each candidate."""
    best, best_cost = np.array(start, dtype=float), inst.cost(start)
    for _ in range(tries):
        cand = best * np.exp(0.5 * rng.standard_normal(inst.m)) * (rng.random(inst.m) >= 0.3)
        cand = fix(inst, cand) if fix is not None else repair(inst, cand, step_frac, credit)
        c = inst.cost(cand)
        if c < best_cost - 1e-9:
            best, best_cost = cand, c
        if trace is not None:
            trace.append(best_cost)
    return best
