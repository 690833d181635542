"""Job shops: random instances, a batched dispatching simulator, dispatching rules, a schedule
checker, and the CP-SAT model (run only through ``map_isolated``).

An instance is ``(machines, durations)``, two int arrays of shape (n_jobs, n_machines): job j's
k-th operation runs on machine ``machines[j, k]`` for ``durations[j, k]``. A solution is a
dispatch sequence: a list of job ids, job j appearing ``n_machines`` times; each dispatched
operation starts at the earliest time both its job and its machine are free (the "append"
semantics of L2D and SLIM: every sequence gives a feasible semi-active schedule, and some
sequence gives an optimal one).
"""
from __future__ import annotations

import numpy as np

N_FEATURES = 10
SETS = ("g10", "g15", "flow")          # test sets: 10x10 JSSP, 15x15 JSSP, 10x10 flow shop


def random_instances(n: int, n_jobs: int, n_machines: int, rng: np.random.Generator, kind: str = "jssp",
                     low: int = 1, high: int = 99):
    """``n`` Taillard-style instances: durations U{low..high}; machine orders a random
    permutation per job (``jssp``) or the same order 0..m-1 for every job (``flow``, a flow shop)."""
    if kind not in ("jssp", "flow"):
        raise ValueError(f"kind must be 'jssp' or 'flow', got {kind!r}")
    if n < 1 or n_jobs < 1 or n_machines < 1:
        raise ValueError(f"n, n_jobs, n_machines must be >= 1, got {n}, {n_jobs}, {n_machines}")
    if not 1 <= low <= high:
        raise ValueError(f"need 1 <= low <= high, got low={low}, high={high}")
    dur = rng.integers(low, high + 1, size=(n, n_jobs, n_machines))
    if kind == "flow":
        mach = np.broadcast_to(np.arange(n_machines), (n, n_jobs, n_machines)).copy()
    else:
        mach = np.argsort(rng.random((n, n_jobs, n_machines)), axis=-1)
    return mach.astype(np.int64), dur.astype(np.int64)


def schedule(machines, durations, sequence):
    """Start times (n_jobs, n_machines) and makespan of a dispatch sequence (plain Python, the
    reference the batched simulator is tested against). Raises on an invalid sequence."""
    machines, durations = np.asarray(machines), np.asarray(durations)
    nj, nm = durations.shape
    seq = list(sequence)
    if sorted(seq) != sorted(list(range(nj)) * nm):
        raise ValueError(f"a dispatch sequence must name every job exactly {nm} times")
    nxt, jr, mr = [0] * nj, [0] * nj, [0] * nm
    start = np.zeros((nj, nm), dtype=np.int64)
    for j in seq:
        k = nxt[j]
        m = machines[j, k]
        s = max(jr[j], mr[m])
        start[j, k] = s
        jr[j] = mr[m] = s + int(durations[j, k])
        nxt[j] += 1
    return start, int(max(jr))


def check_schedule(machines, durations, start) -> int:
    """Makespan of start times ``start`` after checking precedence and machine capacity."""
    machines, durations, start = map(np.asarray, (machines, durations, start))
    nj, nm = durations.shape
    end = start + durations
    if (start < 0).any() or (start[:, 1:] < end[:, :-1]).any():
        raise ValueError("precedence violated: an operation starts before its job's previous one ends")
    for m in range(nm):
        js, ks = np.nonzero(machines == m)
        order = np.argsort(start[js, ks], kind="stable")
        s, e = start[js, ks][order], end[js, ks][order]
        if (s[1:] < e[:-1]).any():
            raise ValueError(f"machine {m} runs two operations at once")
    return int(end.max())


class Shop:
    """A batch of B partial schedules (torch, one per instance x sample), advanced one dispatch
    at a time. ``machines``/``durations``: int tensors (B, n, m), possibly expanded views."""

    def __init__(self, machines, durations):
        import torch

        self.torch = torch
        self.mach, self.dur = machines, durations.float()
        B, n, m = durations.shape
        self.B, self.n, self.m = B, n, m
        dev = durations.device
        self.ar = torch.arange(B, device=dev)
        self.nxt = torch.zeros(B, n, dtype=torch.long, device=dev)
        self.job_ready = torch.zeros(B, n, device=dev)
        self.mach_ready = torch.zeros(B, m, device=dev)
        self.job_rem = self.dur.sum(-1)                                       # work left per job
        # work left per machine: durations scattered onto their machines
        self.mach_rem = torch.zeros(B, m, device=dev).scatter_add_(1, machines.reshape(B, -1),
                                                                   self.dur.reshape(B, -1))
        self.mean_p = self.dur.mean((1, 2)).unsqueeze(1)                      # (B, 1) time unit
        lb = torch.maximum(self.job_rem.max(1).values, self.mach_rem.max(1).values)
        self.lb = lb.unsqueeze(1)                                             # trivial lower bound
        self.pad = torch.zeros(B, n, 1, dtype=torch.long, device=dev)

    def mask(self):
        return self.nxt < self.m                                              # jobs with work left

    def features(self):
        """(B, n, N_FEATURES) features of every job's next operation (zeros once a job is done)."""
        torch = self.torch
        active = self.mask()
        k = self.nxt.clamp(max=self.m - 1).unsqueeze(-1)
        mach = self.mach.gather(2, k).squeeze(-1)
        p = self.dur.gather(2, k).squeeze(-1)
        k2 = (self.nxt + 1).clamp(max=self.m - 1).unsqueeze(-1)
        p2 = torch.where(self.nxt + 1 < self.m, self.dur.gather(2, k2).squeeze(-1), torch.zeros_like(p))
        mr = self.mach_ready.gather(1, mach)
        est = torch.maximum(self.job_ready, mr)
        big = torch.finfo(est.dtype).max
        min_est = torch.where(active, est, big).min(1, keepdim=True).values
        min_ect = torch.where(active, est + p, big).min(1, keepdim=True).values
        same = (mach.unsqueeze(2) == mach.unsqueeze(1)) & active.unsqueeze(1)
        u = self.mean_p
        f = torch.stack([
            p / u,
            p2 / u,
            self.job_rem / (u * self.m),
            (self.m - self.nxt).float() / self.m,
            (est - min_est) / u,
            (est + p - min_ect) / u,
            (mr - self.job_ready) / u,
            self.mach_rem.gather(1, mach) / (u * self.n),
            same.float().sum(-1) / self.n,
            est / self.lb,
        ], -1)
        return f * active.unsqueeze(-1)

    def step(self, job):
        """Dispatch job ``job[b]`` in every schedule b (it must have work left)."""
        b, k = self.ar, self.nxt[self.ar, job]
        m = self.mach[b, job, k]
        p = self.dur[b, job, k]
        end = self.torch.maximum(self.job_ready[b, job], self.mach_ready[b, m]) + p
        self.job_ready[b, job] = end
        self.mach_ready[b, m] = end
        self.job_rem[b, job] -= p
        self.mach_rem[b, m] -= p
        self.nxt[b, job] += 1

    def makespan(self):
        return self.job_ready.max(1).values


RULES = ("SPT", "MWKR", "MOPNR")


def rule_makespans(machines, durations, rule: str):
    """Makespans of a greedy dispatching rule on a batch of instances (numpy in, numpy out):
    SPT = shortest next operation, MWKR = most work remaining, MOPNR = most operations
    remaining; ties go to the lowest job id. The rule chooses within the Giffler-Thompson
    conflict set (the jobs whose next operation is on the machine of the earliest-completing
    one, c*, and can start before c*), so the rules build active schedules, as usual for PDRs."""
    import torch

    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    shop = Shop(torch.as_tensor(machines), torch.as_tensor(durations))
    for _ in range(shop.n * shop.m):
        k = shop.nxt.clamp(max=shop.m - 1).unsqueeze(-1)
        mach = shop.mach.gather(2, k).squeeze(-1)
        est = torch.maximum(shop.job_ready, shop.mach_ready.gather(1, mach))
        ect = torch.where(shop.mask(), est + shop.dur.gather(2, k).squeeze(-1), torch.tensor(float("inf")))
        c_star, j_star = ect.min(1, keepdim=True)
        active = shop.mask() & (mach == mach.gather(1, j_star)) & (est < c_star)
        if rule == "SPT":
            k = shop.nxt.clamp(max=shop.m - 1).unsqueeze(-1)
            score = -shop.dur.gather(2, k).squeeze(-1)
        elif rule == "MWKR":
            score = shop.job_rem.clone()
        else:
            score = (shop.m - shop.nxt).float()
        score = torch.where(active, score, torch.tensor(-float("inf")))
        shop.step(score.argmax(1))
    return shop.makespan().numpy().astype(np.int64)


def cpsat_solve(item):
    """CP-SAT on one instance: ``item = (machines, durations, time_limit)`` (lists; the limit is
    in CP-SAT's deterministic time units, so the answer does not depend on the machine's load;
    one search worker, seed 0; where no schedule is found within it, the limit doubles, up to
    10 times). ``optimal`` records whether CP-SAT proved the makespan optimal. Returns
    {makespan, bound, optimal, wall_s, start}. Imports OR-Tools here: call it only through
    ``stages.common.isolated.map_isolated``."""
    from ortools.sat.python import cp_model

    machines, durations, limit = item
    nj, nm = len(durations), len(durations[0])
    horizon = int(sum(sum(r) for r in durations))
    model = cp_model.CpModel()
    starts, ends, per_machine = {}, {}, [[] for _ in range(nm)]
    for j in range(nj):
        for k in range(nm):
            s = model.new_int_var(0, horizon, f"s{j}_{k}")
            e = model.new_int_var(0, horizon, f"e{j}_{k}")
            per_machine[machines[j][k]].append(model.new_interval_var(s, durations[j][k], e, f"i{j}_{k}"))
            starts[j, k], ends[j, k] = s, e
            if k:
                model.add(s >= ends[j, k - 1])
    for ivs in per_machine:
        model.add_no_overlap(ivs)
    cmax = model.new_int_var(0, horizon, "cmax")
    model.add_max_equality(cmax, [ends[j, nm - 1] for j in range(nj)])
    model.minimize(cmax)
    for _ in range(10):
        solver = cp_model.CpSolver()
        solver.parameters.max_deterministic_time = float(limit)
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = 0
        status = solver.solve(model)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break
        limit = 2 * float(limit)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"CP-SAT found no schedule in {limit} s (status {solver.status_name(status)})")
    return {"makespan": int(solver.objective_value), "bound": int(solver.best_objective_bound),
            "optimal": status == cp_model.OPTIMAL, "wall_s": float(solver.wall_time),
            "start": [[int(solver.value(starts[j, k])) for k in range(nm)] for j in range(nj)]}
