"""The two problems as text: instances, their token descriptions, solution checks and FOARL rewards.

A description is a token sequence whose numbers are tokens (ids ``0 .. NUM-1``) and whose words and
punctuation are special tokens, e.g. ``TSP 10 nodes : 0 ( 12 , 87 ) ; 1 ( 40 , 3 ) ; ... SOL``
or ``KP 10 items cap 131 : 0 ( 23 , 41 ) ; ... SOL`` (item: weight, value). A solution is a token
sequence ended by ``EOS``: a closed tour ``0 a1 .. a(n-1) 0`` or the chosen items in increasing
order. Nothing here masks the model's output: a sequence is parsed as written and judged.

Rewards follow the official LLMCoSolver code (``rewards.py``, Summer142857/LLMCoSolver): a graded
feasibility reward in [0, 1] plus an optimality reward, summed with weights [1, 1] (``rl_train.py``).
TSP: feasibility = 0.2 (parses) + 0.5 x coverage (full when every node is visited exactly once)
+ 0.3 (returns to its start); optimality = 1 / (1 + gap) when feasibility >= 0.9, else
0.1 x feasibility. Knapsack is not one of the paper's seven problems: its reward is built the same
way (0.2 parses and repeats no item + 0.8 within capacity; optimality = value / optimum when feasible,
i.e. 1 - gap, the official code's form for maximisation problems such as OP).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

NUM = 512                      # number tokens 0..511
SPECIALS = ["PAD", "SOL", "EOS", "TSP", "KP", "nodes", "items", "cap", ":", "(", ",", ")", ";"]
TOK = {name: NUM + i for i, name in enumerate(SPECIALS)}
VOCAB = NUM + len(SPECIALS)
PAD, SOL, EOS = TOK["PAD"], TOK["SOL"], TOK["EOS"]
COORD_MAX = 99                 # TSP coordinates are integers 0..99
KP_MAX = 50                    # knapsack weights and values are integers 1..50
PROBLEMS = ("tsp", "kp")


# ---------------------------------------------------------------- instances
def random_tsp(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` distinct integer points in [0, 99]^2, shape (n, 2)."""
    while True:
        pts = rng.integers(0, COORD_MAX + 1, size=(n, 2))
        if len({tuple(p) for p in pts}) == n:
            return pts


def random_kp(rng: np.random.Generator, n: int) -> tuple[np.ndarray, int]:
    """``n`` items (weight, value) in [1, 50]^2 and capacity floor(sum of weights / 2)."""
    items = rng.integers(1, KP_MAX + 1, size=(n, 2))
    return items, int(items[:, 0].sum() // 2)


def distances(pts: np.ndarray) -> np.ndarray:
    d = pts[:, None, :].astype(float) - pts[None, :, :].astype(float)
    return np.sqrt((d ** 2).sum(-1))


def tour_length(pts: np.ndarray, tour) -> float:
    """Length of the closed tour ``tour`` (a permutation; the return edge is added)."""
    t = list(tour)
    d = distances(pts)
    return float(sum(d[a, b] for a, b in zip(t, t[1:] + t[:1])))


def canonical_tour(tour) -> list[int]:
    """The tour as the model writes it: from node 0, the direction whose second node is the
    smaller of 0's two neighbours, closed (``0 .. 0``)."""
    t = list(tour)
    k = t.index(0)
    t = t[k:] + t[:k]
    if len(t) > 2 and t[-1] < t[1]:
        t = [0] + t[1:][::-1]
    return t + [0]


def brute_force_tsp(pts: np.ndarray) -> float:
    """Optimal tour length by enumeration (n <= 9): the tests' reference for OR-Tools."""
    n = len(pts)
    d = distances(pts)
    best = math.inf
    for perm in itertools.permutations(range(1, n)):
        t = (0,) + perm
        best = min(best, sum(d[a, b] for a, b in zip(t, t[1:] + t[:1])))
    return float(best)


def dp_knapsack(items: np.ndarray, cap: int) -> int:
    """Optimal 0/1 knapsack value by dynamic programming: the tests' reference for CP-SAT."""
    best = np.zeros(cap + 1, dtype=np.int64)
    for w, v in items:
        if w <= cap:
            best[w:] = np.maximum(best[w:], best[:cap + 1 - w] + v)
    return int(best[cap])


# ---------------------------------------------------------------- text
def describe_tsp(pts: np.ndarray) -> list[int]:
    toks = [TOK["TSP"], len(pts), TOK["nodes"], TOK[":"]]
    for i, (x, y) in enumerate(pts):
        toks += [i, TOK["("], int(x), TOK[","], int(y), TOK[")"], TOK[";"]]
    return toks + [SOL]


def describe_kp(items: np.ndarray, cap: int) -> list[int]:
    if cap >= NUM:
        raise ValueError(f"knapsack capacity {cap} does not fit the number tokens (< {NUM})")
    toks = [TOK["KP"], len(items), TOK["items"], TOK["cap"], cap, TOK[":"]]
    for i, (w, v) in enumerate(items):
        toks += [i, TOK["("], int(w), TOK[","], int(v), TOK[")"], TOK[";"]]
    return toks + [SOL]


def detokenize(toks) -> str:
    """Tokens as text (for reading and for the README's example)."""
    inv = {v: k for k, v in TOK.items()}
    return " ".join(str(t) if t < NUM else inv[t] for t in toks if t != PAD)


def until_eos(seq) -> tuple[list[int], bool]:
    """The tokens before the first EOS, and whether there was one."""
    seq = [int(t) for t in seq]
    if EOS in seq:
        return seq[:seq.index(EOS)], True
    return seq, False


# ---------------------------------------------------------------- judging a written solution
def judge_tsp(seq, pts: np.ndarray, opt: float) -> dict:
    """Feasibility, objective, gap and FOARL reward of a written tour (no repair, no mask)."""
    n = len(pts)
    body, ended = until_eos(seq)
    parses = ended and len(body) >= 2 and all(t < n for t in body)
    out = {"feasible": False, "objective": math.nan, "gap": math.nan}
    if not parses:
        fea = 0.0
    else:
        closed = body[0] == body[-1]
        inner = body[:-1] if closed else body
        perm = len(inner) == n and len(set(inner)) == n
        fea = 0.2 + (0.5 if perm else 0.5 * min(1.0, len(set(body)) / n)) + (0.3 if closed else 0.0)
        if perm and closed:
            length = tour_length(pts, inner)
            out.update(feasible=True, objective=length, gap=max(0.0, (length - opt) / opt))
    opt_r = 1.0 / (1.0 + out["gap"]) if (fea >= 0.9 and out["feasible"]) else 0.1 * fea
    out.update(r_feas=fea, r_opt=opt_r, reward=fea + opt_r)
    return out


def judge_kp(seq, items: np.ndarray, cap: int, opt: int) -> dict:
    """Feasibility, objective, gap and FOARL reward of a written item set."""
    n = len(items)
    body, ended = until_eos(seq)
    parses = ended and all(t < n for t in body) and len(set(body)) == len(body)
    out = {"feasible": False, "objective": math.nan, "gap": math.nan}
    fea = 0.0
    if parses:
        fea = 0.2
        w = int(items[body, 0].sum()) if body else 0
        if w <= cap:
            fea = 1.0
            v = int(items[body, 1].sum()) if body else 0
            out.update(feasible=True, objective=float(v), gap=max(0.0, (opt - v) / opt) if opt > 0 else 0.0)
    opt_r = (1.0 - out["gap"]) if out["feasible"] else 0.0
    out.update(r_feas=fea, r_opt=opt_r, reward=fea + opt_r)
    return out


def target_tsp(tour) -> list[int]:
    return canonical_tour(tour) + [EOS]


def target_kp(chosen) -> list[int]:
    return sorted(int(i) for i in chosen) + [EOS]
