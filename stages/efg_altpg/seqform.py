"""The sequence form of a two-player zero-sum extensive-form game, built from OpenSpiel's tree.

For each player the *sequences* are the empty sequence (index 0) and every pair
(information set, action); a *realisation plan* x gives each sequence the product of the
player's own action probabilities along it (x[0] = 1). Perfect recall makes each infoset's
parent sequence unique, so x lives in a polytope (the treeplex) and the expected payoff of
player 0 is bilinear: ``x^T A y`` with ``A[s0, s1] = sum over terminals z reached by the
sequence pair (s0, s1) of chance(z) * u_0(z)``.

Layout (what makes the passes vectorised): infosets are ordered by depth (number of the
player's own earlier decisions), and each infoset's actions are a contiguous block of
sequences, so a depth level is a slice of infosets and a slice of sequences; per-infoset
reductions run over the infosets grouped by their number of actions (:meth:`Tree.block_reduce`),
and a pass over the tree is one loop over the (few) levels. Every array may hold one policy
(n_seq,) or a batch of runs, one per column (n_seq, R); each column's arithmetic is the same
whatever the other columns hold. Behavioural policies are stored as a flat vector over sequences
(``pi[s]`` = probability of the last action of ``s`` at its infoset; ``pi[0] = 1``).

What this module computes:
* :func:`build` — the sequence form of a pyspiel game (tree walk, perfect-recall checked);
* :meth:`Tree.reach` — behavioural policy -> realisation plan (top-down);
* :meth:`Tree.best_response_value` — ``max_x x . g`` by backward induction (bottom-up);
* :func:`exploitability` — (best-response gains of both players) / 2, i.e. NashConv / 2,
  what ``open_spiel.python.algorithms.exploitability.exploitability`` returns;
* :func:`to_tabular_policy` — a behavioural pair as an OpenSpiel ``TabularPolicy``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class Tree:
    """One player's side of the sequence form (see the module docstring for the layout)."""

    parent: np.ndarray      # int[n_inf]: parent sequence of each infoset
    start: np.ndarray       # int[n_inf]: first sequence of the infoset's block
    nact: np.ndarray        # int[n_inf]: actions at the infoset
    actions: np.ndarray     # int[n_seq]: OpenSpiel action id of each sequence's last action (-1 for 0)
    keys: np.ndarray        # str[n_inf]: OpenSpiel information_state_string of each infoset
    level_inf: np.ndarray   # int[L+1]: infosets of depth level l are level_inf[l]:level_inf[l+1]
    level_seq: np.ndarray   # int[L+1]: sequences of depth level l are level_seq[l]:level_seq[l+1]
    # derived (not stored)
    seq_inf: np.ndarray = field(init=False)      # int[n_seq]: infoset of each sequence (-1 for 0)
    seq_parent: np.ndarray = field(init=False)   # int[n_seq]: parent sequence of each sequence's infoset
    levels: list = field(init=False)             # [(i0, i1, s0, s1, block offsets, local owner)]
    size_groups: list = field(init=False)        # [(k, int[m, k] sequences of the m infosets with k actions)]
    offsets: np.ndarray = field(init=False)      # block starts relative to sequence 1 (reduceat over v[1:])
    level_parents: list = field(init=False)      # per level: (distinct parent sequences, each infoset's slot)
    groups: list = field(init=False)             # [(k, infosets with k actions, int[m, k] their sequences)]
    level_groups: list = field(init=False)       # per level: the same, indices relative to the level's slices

    def __post_init__(self) -> None:
        n_seq = 1 + int(self.nact.sum())
        self.seq_inf = np.full(n_seq, -1, dtype=np.int64)
        for i, (s, n) in enumerate(zip(self.start, self.nact)):
            self.seq_inf[s:s + n] = i
        if (self.seq_inf[1:] < 0).any() or self.start[0] != 1:
            raise ValueError("sequence blocks must tile 1..n_seq-1 contiguously")
        self.offsets = (self.start - 1).astype(np.int64)
        self.seq_parent = np.zeros(n_seq, dtype=np.int64)
        self.seq_parent[1:] = self.parent[self.seq_inf[1:]]
        self.levels = []
        for lv in range(len(self.level_inf) - 1):
            i0, i1 = int(self.level_inf[lv]), int(self.level_inf[lv + 1])
            s0, s1 = int(self.level_seq[lv]), int(self.level_seq[lv + 1])
            offs = (self.start[i0:i1] - s0).astype(np.int64)
            owner = self.seq_inf[s0:s1] - i0
            self.levels.append((i0, i1, s0, s1, offs, owner))
        self.size_groups = [(int(k), self.start[self.nact == k][:, None] + np.arange(k)[None, :])
                            for k in np.unique(self.nact)]
        self.level_parents = [np.unique(self.parent[i0:i1], return_inverse=True)
                              for i0, i1, *_ in self.levels]
        self.groups = self._groups(0, self.n_inf, 0)
        self.level_groups = [self._groups(i0, i1, s0) for i0, i1, s0, *_ in self.levels]

    def _groups(self, i0: int, i1: int, s0: int) -> list:
        nact = self.nact[i0:i1]
        return [(int(k), np.flatnonzero(nact == k), (self.start[i0:i1][nact == k] - s0)[:, None] + np.arange(k))
                for k in np.unique(nact)]

    def block_reduce(self, v: np.ndarray, op=np.add, level: int | None = None) -> np.ndarray:
        """Per infoset, ``op`` (np.add or np.maximum) over its block of ``v``, the actions in
        order: over every infoset (``v`` over all sequences), or over the infosets of depth level
        ``level`` (``v`` over that level's sequences)."""
        groups = self.groups if level is None else self.level_groups[level]
        n = self.n_inf if level is None else self.levels[level][1] - self.levels[level][0]
        out = np.empty((n,) + v.shape[1:])
        for k, inf, seq in groups:
            acc = v[seq[:, 0]]
            for j in range(1, k):
                acc = op(acc, v[seq[:, j]])
            out[inf] = acc
        return out

    @property
    def n_seq(self) -> int:
        return len(self.seq_inf)

    @property
    def n_inf(self) -> int:
        return len(self.parent)


    def block_sum(self, v: np.ndarray) -> np.ndarray:
        """Per-infoset sums of ``v`` over the sequences of each block (``v`` over all sequences)."""
        return self.block_reduce(v)

    def uniform(self) -> np.ndarray:
        pi = np.ones(self.n_seq)
        pi[1:] = 1.0 / self.nact[self.seq_inf[1:]]
        return pi

    def reach(self, pi: np.ndarray) -> np.ndarray:
        """Realisation plan of a behavioural policy: x[s] = x[parent seq] * pi[s], top-down.
        ``pi`` is one policy (n_seq,) or a batch of runs, one per column (n_seq, R)."""
        x = np.empty(pi.shape)
        x[0] = 1.0
        for _, _, s0, s1, _, _ in self.levels:
            x[s0:s1] = x[self.seq_parent[s0:s1]] * pi[s0:s1]
        return x

    def add_to_parents(self, acc: np.ndarray, level: int, v: np.ndarray) -> None:
        """``acc[parent(I)] += v[I]`` for the infosets I of depth level ``level`` (``acc`` and ``v``
        of shape (n, R): one column per run). Each column's sums run over its own values in
        infoset order, so a run's arithmetic does not depend on the other columns."""
        uniq, slot = self.level_parents[level]
        runs = v.shape[1]
        bins = (slot[:, None] * runs + np.arange(runs)[None, :]).ravel()
        acc[uniq] += np.bincount(bins, weights=v.ravel(), minlength=len(uniq) * runs).reshape(len(uniq), runs)

    def behavioural(self, x: np.ndarray) -> np.ndarray:
        """Behavioural policy of a realisation plan (uniform where the parent is unreached)."""
        par = x[self.seq_parent]
        pi = np.where(par > 0, x / np.where(par > 0, par, 1.0), 1.0 / np.maximum(
            self.nact[np.maximum(self.seq_inf, 0)], 1))
        pi[0] = 1.0
        return pi

    def best_response_value(self, g: np.ndarray) -> float | np.ndarray:
        """max over realisation plans x of ``x . g`` (the player's best-response value when
        ``g`` is its payoff per own sequence against fixed opponent and chance), by backward
        induction: Q(s) = g[s] + sum of the values of the infosets below s; V(I) = max Q.
        ``g`` (n_seq,) gives a float; (n_seq, R), one run per column, gives R values."""
        one = g.ndim == 1
        acc = np.array(g[:, None] if one else g, dtype=float, copy=True)
        for lv in reversed(range(len(self.levels))):
            _, _, s0, s1, offs, _ = self.levels[lv]
            self.add_to_parents(acc, lv, self.block_reduce(acc[s0:s1], np.maximum, lv))
        return float(acc[0, 0]) if one else acc[0].copy()

    def check(self) -> None:
        """Perfect-recall treeplex invariants: parents lie above their infosets."""
        lv_of_seq = np.zeros(self.n_seq, dtype=np.int64)
        for lv, (_, _, s0, s1, _, _) in enumerate(self.levels):
            lv_of_seq[s0:s1] = lv + 1
        for lv, (i0, i1, _, _, _, _) in enumerate(self.levels):
            if not (lv_of_seq[self.parent[i0:i1]] == lv).all():
                raise ValueError(f"infosets of level {lv} must hang below level {lv - 1} sequences")


@dataclass
class SequenceForm:
    """Both players' trees, the terminals, and the sparse payoff matrix of player 0."""

    game: str
    trees: tuple[Tree, Tree]
    t_seq: np.ndarray      # int[n_term, 2]: each terminal's sequence of player 0 and of player 1
    t_chance: np.ndarray   # float[n_term]: chance probability of each terminal
    t_util: np.ndarray     # float[n_term]: player 0's utility at each terminal (zero sum)
    A: object = field(init=False)      # scipy.sparse CSR, n_seq0 x n_seq1
    AT: object = field(init=False)     # its transpose, CSR

    def __post_init__(self) -> None:
        import scipy.sparse as sp

        n0, n1 = self.trees[0].n_seq, self.trees[1].n_seq
        coo = sp.coo_matrix((self.t_chance * self.t_util, (self.t_seq[:, 0], self.t_seq[:, 1])),
                            shape=(n0, n1))
        self.A = coo.tocsr()          # duplicates summed
        self.A.sum_duplicates()
        self.AT = self.A.T.tocsr()

    def payoff_vectors(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each player's payoff per own sequence: A y for player 0, -A^T x for player 1."""
        return self.A @ y, -(self.AT @ x)

    def value(self, pi0: np.ndarray, pi1: np.ndarray) -> float:
        """Player 0's expected utility when both play their behavioural policies."""
        return float(self.trees[0].reach(pi0) @ (self.A @ self.trees[1].reach(pi1)))

    def exploitability(self, pi0: np.ndarray, pi1: np.ndarray) -> float:
        return exploitability(self, self.trees[0].reach(pi0), self.trees[1].reach(pi1))

    def save(self, path: str | Path) -> None:
        from stages.common.io import write_npz

        arrays = {"game": np.array(self.game), "t_seq": self.t_seq, "t_chance": self.t_chance,
                  "t_util": self.t_util}
        for p, t in enumerate(self.trees):
            for k in ("parent", "start", "nact", "actions", "keys", "level_inf", "level_seq"):
                arrays[f"p{p}_{k}"] = getattr(t, k)
        write_npz(path, arrays)

    @classmethod
    def load(cls, path: str | Path) -> "SequenceForm":
        with np.load(path, allow_pickle=False) as z:
            trees = tuple(Tree(**{k: z[f"p{p}_{k}"] for k in
                                  ("parent", "start", "nact", "actions", "keys", "level_inf", "level_seq")})
                          for p in range(2))
            return cls(str(z["game"]), trees, z["t_seq"], z["t_chance"], z["t_util"])


def exploitability(sf: SequenceForm, x: np.ndarray, y: np.ndarray) -> float | np.ndarray:
    """(max_x' x'.Ay - min_y' x.Ay') / 2 = NashConv / 2, by backward induction on each tree;
    of one pair of realisation plans, or of R pairs (x, y of shape (n_seq, R), a run a column)."""
    g0, g1 = sf.payoff_vectors(x, y)
    return 0.5 * (sf.trees[0].best_response_value(g0) + sf.trees[1].best_response_value(g1))


def build(game) -> SequenceForm:
    """Walk the whole game tree of a two-player zero-sum pyspiel game and return its sequence form.

    Infosets are keyed by ``information_state_string``; perfect recall is checked (an infoset
    seen twice must have the same parent sequence and legal actions)."""
    import pyspiel

    gtype = game.get_type()
    if game.num_players() != 2 or gtype.utility != pyspiel.GameType.Utility.ZERO_SUM:
        raise ValueError(f"{gtype.short_name}: need a two-player zero-sum game")
    if gtype.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"{gtype.short_name}: need a sequential (extensive-form) game")
    # discovery order: per player, infoset -> (parent seq id, legal actions, depth)
    infos: list[dict[str, int]] = [{}, {}]
    meta: list[list[tuple[int, list[int], int]]] = [[], []]
    seq_ids: list[dict[tuple[int, int], int]] = [{}, {}]   # (infoset, action) -> provisional seq id
    seq_depth: list[list[int]] = [[0], [0]]
    terminals: list[tuple[int, int, float, float]] = []

    stack = [(game.new_initial_state(), 0, 0, 1.0)]
    while stack:
        state, s0, s1, chance = stack.pop()
        if state.is_terminal():
            terminals.append((s0, s1, chance, state.returns()[0]))
            continue
        if state.is_chance_node():
            for a, p in state.chance_outcomes():
                if p > 0:
                    stack.append((state.child(a), s0, s1, chance * p))
            continue
        pl = state.current_player()
        if pl not in (0, 1):
            raise ValueError(f"unsupported node for player {pl} (simultaneous moves?)")
        key = state.information_state_string(pl)
        legal = list(state.legal_actions())
        own = s0 if pl == 0 else s1
        if key not in infos[pl]:
            i = len(meta[pl])
            infos[pl][key] = i
            depth = seq_depth[pl][own]
            meta[pl].append((own, legal, depth))
            for a in legal:
                seq_ids[pl][(i, a)] = len(seq_depth[pl])
                seq_depth[pl].append(depth + 1)
        else:
            i = infos[pl][key]
            if meta[pl][i][0] != own or meta[pl][i][1] != legal:
                raise ValueError(f"infoset {key!r} of player {pl}: not perfect recall "
                                 f"(reached from different own sequences or with other actions)")
        for a in legal:
            sid = seq_ids[pl][(i, a)]
            stack.append((state.child(a), sid if pl == 0 else s0, sid if pl == 1 else s1, chance))

    trees, remaps = [], []
    for pl in range(2):
        keys = list(infos[pl])
        # depth-major order, discovery order within a depth
        order = sorted(range(len(keys)), key=lambda i: (meta[pl][i][2], i))
        new_seq = np.zeros(len(seq_depth[pl]), dtype=np.int64)
        starts, nacts, acts, level_inf, level_seq = [], [], [-1], [], []
        nxt, last_depth = 1, -1
        for rank, i in enumerate(order):
            _, legal, depth = meta[pl][i]
            while last_depth < depth:          # open the level(s) this infoset starts
                level_inf.append(rank)
                level_seq.append(nxt)
                last_depth += 1
            starts.append(nxt)
            nacts.append(len(legal))
            for a in legal:
                new_seq[seq_ids[pl][(i, a)]] = nxt
                acts.append(a)
                nxt += 1
        level_inf.append(len(order))
        level_seq.append(nxt)
        parents = np.array([new_seq[meta[pl][i][0]] for i in order], dtype=np.int64)
        tree = Tree(parent=parents, start=np.array(starts, dtype=np.int64),
                    nact=np.array(nacts, dtype=np.int64), actions=np.array(acts, dtype=np.int64),
                    keys=np.array([keys[i] for i in order]), level_inf=np.array(level_inf, dtype=np.int64),
                    level_seq=np.array(level_seq, dtype=np.int64))
        tree.check()
        trees.append(tree)
        remaps.append(new_seq)
    t = np.array([(a, b) for a, b, _, _ in terminals], dtype=np.int64)
    t_seq = np.stack([remaps[0][t[:, 0]], remaps[1][t[:, 1]]], axis=1)
    return SequenceForm(gtype.short_name, tuple(trees),
                        t_seq, np.array([c for _, _, c, _ in terminals]),
                        np.array([u for _, _, _, u in terminals]))


def to_tabular_policy(game, sf: SequenceForm, pis: tuple[np.ndarray, np.ndarray]):
    """The behavioural pair as an OpenSpiel TabularPolicy: each row is zeroed, then filled
    (rows default to uniform, so a missed action would silently keep probability)."""
    from open_spiel.python import policy as os_policy

    tab = os_policy.TabularPolicy(game)
    arr = tab.action_probability_array
    for tree, pi in zip(sf.trees, pis):
        for i, key in enumerate(tree.keys):
            row = tab.state_lookup[str(key)]
            arr[row, :] = 0.0
            s, n = tree.start[i], tree.nact[i]
            arr[row, tree.actions[s:s + n]] = pi[s:s + n]
    return tab


def openspiel_exploitability(game, sf: SequenceForm, pis: tuple[np.ndarray, np.ndarray]) -> float:
    """OpenSpiel's exploitability (NashConv / 2) of a behavioural pair (python implementation)."""
    from open_spiel.python.algorithms import exploitability as os_expl

    return float(os_expl.exploitability(game, to_tabular_policy(game, sf, pis)))
