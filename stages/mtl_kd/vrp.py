"""VRP variants in one layout with variant flags (as multi-task VRP solvers do): instances,
the feasibility checker and route cost (numpy, one solution at a time), and the batched
construction environment (torch) that teachers and the student share.

Variants are flag pairs ``(open, tw)``: CVRP (0, 0), OVRP (1, 0), VRPTW (0, 1) and the unseen
combination OVRPTW (1, 1). Coordinates lie in the unit square, speed is 1 (a distance is a
travel time), demands are integers 1..9 with the capacity of POMO's generator (30 at n=20, 40 at
n=50). An open route pays no return leg and has no return deadline. Time windows: the depot
opens on [0, HORIZON], each customer has a window [a, b] and a service time SERVICE, drawn so
that a vehicle that goes there straight from the depot is always feasible.
"""
from __future__ import annotations

import numpy as np

VARIANTS = {"cvrp": (0, 0), "ovrp": (1, 0), "vrptw": (0, 1), "ovrptw": (1, 1)}
HORIZON = 3.2        # depot closing time; > 2 sqrt(2) + SERVICE, so every customer alone is feasible
SERVICE = 0.2        # service time of a customer in the TW variants
CAPACITY = {20: 30, 50: 40, 100: 50}
N_FEATURES = 7       # x, y, demand/capacity, tw start/H, tw end/H, open flag, tw flag
KEYS = ("xy", "demand", "window", "capacity", "open", "tw")      # an instance's arrays


def capacity_for(n: int) -> int:
    if n in CAPACITY:
        return CAPACITY[n]
    return int(round(30 + 10 * np.log2(max(n, 20) / 20)))


def generate(variant: str, n: int, count: int, rng) -> dict:
    """``count`` instances of ``variant`` with ``n`` customers (node 0 is the depot)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown VRP variant {variant!r}; known: {sorted(VARIANTS)}")
    if n < 2 or count < 1:
        raise ValueError(f"need n >= 2 customers and count >= 1 instances, got n={n}, count={count}")
    open_, tw = VARIANTS[variant]
    xy = rng.random((count, n + 1, 2))
    demand = np.concatenate([np.zeros((count, 1), np.int64), rng.integers(1, 10, (count, n))], axis=1)
    window = np.zeros((count, n + 1, 2))
    window[:, :, 1] = HORIZON
    if tw:
        d0 = np.linalg.norm(xy - xy[:, :1], axis=-1)[:, 1:]              # depot -> customer
        latest = HORIZON - SERVICE - d0 * (1 - open_)                     # last start that still gets home
        width = rng.uniform(0.2, 0.6, (count, n))
        a = rng.random((count, n)) * np.maximum(latest - width, 0.0)
        b = np.clip(a + width, d0, latest)
        window[:, 1:, 0], window[:, 1:, 1] = a, b
    return {"xy": xy, "demand": demand, "window": window,
            "capacity": np.full(count, capacity_for(n), np.int64),
            "open": np.full(count, open_, np.int64), "tw": np.full(count, tw, np.int64)}


def take(inst: dict, idx) -> dict:
    return {k: v[idx] for k, v in inst.items()}


def concat(parts: list[dict]) -> dict:
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def features(inst: dict) -> np.ndarray:
    """(B, n+1, N_FEATURES): one node layout for every variant, flags on every node."""
    b, m = inst["demand"].shape
    f = np.zeros((b, m, N_FEATURES), np.float32)
    f[..., :2] = inst["xy"]
    f[..., 2] = inst["demand"] / inst["capacity"][:, None]
    f[..., 3:5] = inst["window"] / HORIZON
    f[..., 5] = inst["open"][:, None]
    f[..., 6] = inst["tw"][:, None]
    return f


# ---- one solution: feasibility and cost (the reference the tests check against PyVRP) ----------
def route_cost(inst: dict, i: int, routes: list[list[int]]) -> float:
    """Total length of ``routes`` (customer indices 1..n) of instance ``i``; an open route pays no
    return leg."""
    xy = inst["xy"][i]
    total = 0.0
    for r in routes:
        path = [0, *r] if inst["open"][i] else [0, *r, 0]
        total += float(np.linalg.norm(np.diff(xy[path], axis=0), axis=1).sum())
    return total


def check_solution(inst: dict, i: int, routes: list[list[int]], tol: float = 1e-6) -> list[str]:
    """Everything wrong with ``routes`` for instance ``i`` (an empty list: feasible)."""
    n = inst["demand"].shape[1] - 1
    xy, dem, win = inst["xy"][i], inst["demand"][i], inst["window"][i]
    cap, open_, tw = int(inst["capacity"][i]), bool(inst["open"][i]), bool(inst["tw"][i])
    problems = []
    seen = [c for r in routes for c in r]
    if sorted(seen) != list(range(1, n + 1)):
        problems.append(f"customers visited {sorted(seen)} are not each of 1..{n} exactly once")
    for k, r in enumerate(routes):
        if not r:
            problems.append(f"route {k} is empty")
            continue
        load = int(sum(dem[c] for c in r))
        if load > cap:
            problems.append(f"route {k} carries {load} > capacity {cap}")
        if tw:
            t, prev = 0.0, 0
            for c in r:
                t += float(np.linalg.norm(xy[c] - xy[prev]))
                if t > win[c, 1] + tol:
                    problems.append(f"route {k} reaches customer {c} at {t:.4f} after its window ends "
                                    f"({win[c, 1]:.4f})")
                t = max(t, win[c, 0]) + SERVICE
                prev = c
            if not open_ and t + float(np.linalg.norm(xy[prev] - xy[0])) > HORIZON + tol:
                problems.append(f"route {k} returns after the depot closes ({HORIZON})")
    return problems


# ---- the batched construction environment -----------------------------------------------------
class Env:
    """Batched construction: B instances, P rollouts each (POMO starts). Node 0 is the depot; a
    vehicle leaves it, serves feasible customers and goes back; an unlimited fleet."""

    def __init__(self, inst: dict, pomo: int, device="cpu"):
        import torch

        t = lambda a, dt=torch.float32: torch.as_tensor(a, dtype=dt, device=device)   # noqa: E731
        self.torch = torch
        self.xy = t(inst["xy"])
        self.B, self.M = self.xy.shape[:2]
        self.P = pomo
        self.dist = torch.cdist(self.xy, self.xy)                                   # (B, M, M)
        self.demand = t(inst["demand"]) / t(inst["capacity"])[:, None]               # fraction
        self.win = t(inst["window"])
        self.open = t(inst["open"]).bool()
        self.tw = t(inst["tw"]).bool()
        self.service = torch.where(self.tw, SERVICE, 0.0)                             # (B,)
        B, P, M = self.B, self.P, self.M
        self.cur = torch.zeros(B, P, dtype=torch.long, device=device)
        self.load = torch.ones(B, P, device=device)          # capacity left, as a fraction
        self.time = torch.zeros(B, P, device=device)
        self.visited = torch.zeros(B, P, M, dtype=torch.bool, device=device)
        self.cost = torch.zeros(B, P, device=device)
        self.bidx = torch.arange(B, device=device)[:, None].expand(B, P)
        self.pidx = torch.arange(P, device=device)[None, :].expand(B, P)

    def all_done(self):
        return self.visited[:, :, 1:].all(-1)

    def finished(self) -> bool:
        return bool((self.all_done() & (self.cur == 0)).all())

    def mask(self):
        """(B, P, M) True where the next node is feasible."""
        torch = self.torch
        d_cur = self.dist[self.bidx, self.cur]                                     # (B, P, M)
        ok = ~self.visited & (self.demand[:, None, :] <= self.load[..., None] + 1e-6)
        arrive = self.time[..., None] + d_cur
        start = torch.maximum(arrive, self.win[:, None, :, 0])
        back = torch.where(self.open[:, None, None], 0.0, self.dist[:, None, 0, :])  # (B, 1, M)
        ok_tw = (arrive <= self.win[:, None, :, 1] + 1e-6) & \
                (start + self.service[:, None, None] + back <= HORIZON + 1e-6)
        ok = ok & (ok_tw | ~self.tw[:, None, None])
        ok[:, :, 0] = (self.cur != 0) | self.all_done()        # depot: not twice in a row unless done
        return ok

    def step(self, a):
        torch = self.torch
        d = self.dist[self.bidx, self.cur, a]
        to_depot = a == 0
        self.cost = self.cost + torch.where(to_depot & self.open[:, None], 0.0, d)
        arrive = self.time + d
        start = torch.maximum(arrive, self.win[self.bidx, a, 0])
        self.time = torch.where(to_depot, 0.0, start + self.service[:, None])
        self.load = torch.where(to_depot, 1.0, self.load - self.demand[self.bidx, a])
        self.visited = self.visited.clone()
        self.visited[self.bidx, self.pidx, a] = True
        self.visited[:, :, 0] = False
        self.cur = a

    def state(self):
        """(B, P, 4): load left, time/H, open flag, tw flag (the decoder's context)."""
        torch = self.torch
        return torch.stack([self.load, self.time / HORIZON,
                            self.open[:, None].float().expand_as(self.load),
                            self.tw[:, None].float().expand_as(self.load)], -1)


def routes_from_actions(actions) -> list[list[int]]:
    """A node sequence (starting after the depot, 0 = depot) as a list of routes."""
    routes, cur = [], []
    for a in actions:
        a = int(a)
        if a == 0:
            if cur:
                routes.append(cur)
            cur = []
        else:
            cur.append(a)
    if cur:
        routes.append(cur)
    return routes
