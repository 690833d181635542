"""L2D, the RL baseline: Zhang, Song, Cao, Zhang, Tan, Xu, "Learning to Dispatch for Job Shop
Scheduling via Deep Reinforcement Learning" (NeurIPS 2020; code zcaicaros/L2D), on our simulator.

What follows L2D's code (models/graphcnn_congForSJSSP.py, models/mlp.py, models/actor_critic.py,
JSSP_Env.py, updateEntTimeLB.py, PPO_jssp_multiInstances.py, Params.py):

- the state is the disjunctive graph: one node per operation, with the features (LB / 1000,
  scheduled), LB the lower bound of the operation's completion time (its end if scheduled, else its
  job's last end plus the durations up to it: calEndTimeLB); each node aggregates itself, its job
  predecessor and, once scheduled, its predecessor on its machine (the adjacency L2D's env keeps);
- a GIN of two layers (``num_layers`` 3 counts the input), each the sum over those neighbours
  then an MLP Linear-ReLU-Linear of width 64, then ReLU; the graph embedding is the mean node
  embedding; the actor scores each job's next operation from [its node embedding, the graph
  embedding] by an MLP 128-32-1 with tanh, the critic the graph embedding by an MLP 64-32-1 with
  tanh; the action is one of the jobs' next operations (the same action space as our policies);
- the reward of a dispatch is the decrease of max LB (so an episode's return is max LB at the start
  minus the makespan), returns to go undiscounted (gamma 1) and standardised per episode over its
  steps; advantage = standardised return - V; loss = 1 x MSE(V) + 2 x clipped surrogate - 0.01 x
  entropy (eps_clip 0.2), one epoch per update (k_epochs 1), Adam; fresh random shops every
  update, one episode each (L2D's num_envs shops an update).

Where we differ: dispatching appends each operation (start = max(job ready, machine ready), as for
every method here) where L2D's env inserts it into the earliest machine gap that fits (permissible
left shift); no BatchNorm in the GIN's MLPs (a batch statistic would tie the rows, and the seeds,
of a batch together); the loss is the mean over a update's episodes where L2D sums them (Adam is
invariant to that scale); with one epoch per update the policy that sampled the episodes is the
one updated, so the PPO ratio is exactly 1 and its gradient is taken on the rollout's own forward
pass (L2D recomputes the same numbers in a second pass); the budget (updates, episodes per update,
learning rate) is ours, tuned on calibration seeds (README: Calibration). Every seed of a run
trains together, its parameters stacked along a leading seed dimension as in policy.py.
"""
from __future__ import annotations

import numpy as np

from .jsp import Shop, random_instances
from .policy import _lin, gumbel, seed_generators

LB_SCALE = 1000.0           # L2D's et_normalize_coef
PPO = {"eps_clip": 0.2, "vloss_coef": 1.0, "ploss_coef": 2.0, "entloss_coef": 0.01}   # L2D's Params.py


def build_l2d(hidden: int = 64, hidden_head: int = 32):
    """One seed's L2D actor-critic (initialised from torch's global generator: seed it first)."""
    from torch import nn

    class L2DNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden, self.hidden_head, self.n_policies = hidden, hidden_head, 1
            self.gin = nn.ModuleList([nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
                                      for d in (2, hidden)])
            self.actor = nn.Sequential(nn.Linear(2 * hidden, hidden_head), nn.Tanh(), nn.Linear(hidden_head, 1))
            self.critic = nn.Sequential(nn.Linear(hidden, hidden_head), nn.Tanh(), nn.Linear(hidden_head, 1))

    return L2DNet()


class Graph:
    """L2D's disjunctive-graph state on top of a :class:`jsp.Shop` (rows B, n jobs, m machines,
    N = n*m nodes, node j*m + k = job j's k-th operation)."""

    def __init__(self, mach, dur):
        import torch

        self.shop = shop = Shop(mach, dur)
        B, n, m = shop.B, shop.n, shop.m
        dev = dur.device
        self.N = n * m
        self.end = torch.zeros(B, n, m, device=dev)
        self.cum = shop.dur.cumsum(-1)
        self.mpred = torch.full((B, self.N), -1, dtype=torch.long, device=dev)     # machine predecessor
        self.mach_last = torch.full((B, m), -1, dtype=torch.long, device=dev)
        self.col = torch.arange(m, device=dev)

    def lower_bounds(self):
        """(B, n, m) LB of every operation's completion time (L2D's calEndTimeLB)."""
        import torch

        s = self.shop
        done = self.col < s.nxt.unsqueeze(-1)                                      # scheduled ops
        before = torch.where(s.nxt > 0, self.cum.gather(2, (s.nxt - 1).clamp(min=0).unsqueeze(-1)).squeeze(-1),
                             torch.zeros_like(s.job_ready))
        lb = s.job_ready.unsqueeze(-1) + self.cum - before.unsqueeze(-1)
        return torch.where(done, self.end, lb)

    def features(self):
        """(B, N, 2) node features: LB / 1000 and whether the operation is scheduled; and max LB (B,)."""
        import torch

        lb = self.lower_bounds()
        done = (self.col < self.shop.nxt.unsqueeze(-1)).to(lb.dtype)
        return torch.stack([lb / LB_SCALE, done], -1).view(self.shop.B, self.N, 2), lb.flatten(1).max(1).values

    def machine_predecessors(self):
        """(index, present) of each node's machine predecessor (any valid index where there is none);
        the job predecessor of node j*m + k is node j*m + k - 1 for k > 0."""
        return self.mpred.clamp(min=0), self.mpred >= 0

    def candidates(self):
        """(B, n) node of each job's next operation (the last one for a finished job)."""
        s = self.shop
        return (self.col.new_tensor(range(s.n)) * s.m).unsqueeze(0) + s.nxt.clamp(max=s.m - 1)

    def step(self, job):
        """Dispatch job ``job[b]`` in every row b: its machine predecessor is the machine's last op."""
        s = self.shop
        b, k = s.ar, s.nxt[s.ar, job]
        m = s.mach[b, job, k]
        node = job * s.m + k
        self.mpred[b, node] = self.mach_last[b, m]
        self.mach_last[b, m] = node
        s.step(job)
        self.end[b, job, k] = s.job_ready[b, job]


def forward(P: dict, g: Graph, S: int):
    """Actor logits (S, R, n) over jobs (finished jobs -inf) and critic values (S, R) of S seeds'
    stacked L2D networks on a graph of S * R rows (seed-major); also max LB (S * R,)."""
    import torch

    x, max_lb = g.features()
    B, N = x.shape[:2]
    R, n, m = B // S, g.shop.n, g.shop.m
    mi, mw = g.machine_predecessors()
    mw = mw.unsqueeze(-1).to(x.dtype)
    h = x
    for layer in range(2):
        H = h.shape[-1]
        pooled = h.clone()                                   # itself, + its job predecessor (the op before
        pooled.view(B, n, m, H)[:, :, 1:] += h.view(B, n, m, H)[:, :, :-1]     # it in the job), + its machine's
        pooled += mw * h.gather(1, mi.unsqueeze(-1).expand(-1, -1, H))           # predecessor once scheduled
        z = _lin(pooled.view(S, R * N, H), P[f"gin.{layer}.0.weight"], P[f"gin.{layer}.0.bias"]).relu_()
        z = _lin(z, P[f"gin.{layer}.2.weight"], P[f"gin.{layer}.2.bias"]).relu_()
        h = z.view(B, N, -1)
    H = h.shape[-1]
    graph = h.mean(1)                                                               # (B, H)
    cand = h.gather(1, g.candidates().unsqueeze(-1).expand(-1, -1, H))             # (B, n, H)
    a = torch.cat([cand, graph.unsqueeze(1).expand_as(cand)], -1).view(S, R * n, 2 * H)
    a = torch.tanh(_lin(a, P["actor.0.weight"], P["actor.0.bias"]))
    scores = _lin(a, P["actor.2.weight"], P["actor.2.bias"]).view(S, R, n)
    c = torch.tanh(_lin(graph.view(S, R, H), P["critic.0.weight"], P["critic.0.bias"]))
    v = _lin(c, P["critic.2.weight"], P["critic.2.bias"]).view(S, R)
    return scores.masked_fill(~g.shop.mask().view(S, R, n), -float("inf")), v, max_lb


def rollout(P: dict, mach, dur, S: int, gens=None, greedy: bool = False, grad: bool = False):
    """One episode per row of S seeds' networks (rows seed-major, S * R): actions (S * R, n*m),
    makespans (S * R,), and with ``grad`` the per-step log-probabilities, entropies, values and
    rewards (S, R, T) with the graph kept for the update."""
    import contextlib

    import torch

    ctx = contextlib.nullcontext() if grad else torch.no_grad()
    with ctx:
        g = Graph(mach, dur)
        n, m, B = g.shop.n, g.shop.m, g.shop.B
        R, T = B // S, n * m
        acts = torch.empty(B, T, dtype=torch.long, device=dur.device)
        logp, ent, val, rew = [], [], [], []
        prev = None
        for t in range(T):
            lg, v, max_lb = forward(P, g, S)
            if prev is not None:
                rew.append((prev - max_lb).view(S, R))
            prev = max_lb
            a = lg.argmax(-1) if greedy else (lg.detach() + gumbel(gens, (R, n), lg.device)).argmax(-1)
            if grad:
                lp = torch.log_softmax(lg, -1)
                p = lp.exp()
                logp.append(lp.gather(-1, a.unsqueeze(-1)).squeeze(-1))
                ent.append(-(p * lp.masked_fill(p == 0, 0)).sum(-1))
                val.append(v)
            a = a.view(-1)
            acts[:, t] = a
            g.step(a)
        ms = g.shop.makespan()
        if not grad:
            return acts, ms
        rew.append((prev - ms).view(S, R))           # the last dispatch: max LB becomes the makespan
        return acts, ms, torch.stack(logp, -1), torch.stack(ent, -1), torch.stack(val, -1), torch.stack(rew, -1)


def ppo_loss(logp, ent, val, rew):
    """L2D's PPO loss per seed (S,) from one epoch's rollout (S, R, T tensors): returns to go
    (gamma 1) standardised per episode, advantage = standardised return - V, 1 x MSE(V) + 2 x
    clipped surrogate - 0.01 x entropy, averaged over steps and episodes. The ratio of the one
    epoch is exactly 1 (the sampling policy is the one updated): its gradient is A grad log pi."""
    import torch

    ret = rew.flip(-1).cumsum(-1).flip(-1)
    ret = (ret - ret.mean(-1, keepdim=True)) / (ret.std(-1, keepdim=True) + 1e-5)
    adv = ret - val.detach()
    ratio = torch.exp(logp - logp.detach())
    surr = torch.minimum(ratio * adv, ratio.clamp(1 - PPO["eps_clip"], 1 + PPO["eps_clip"]) * adv)
    v_loss = (val - ret).pow(2).mean(-1)
    per_episode = PPO["vloss_coef"] * v_loss + (-PPO["ploss_coef"] * surr - PPO["entloss_coef"] * ent).mean(-1)
    return per_episode.mean(-1)


def init_l2d(seeds, hidden: int, hidden_head: int) -> list:
    import torch

    nets = []
    for s in seeds:
        torch.manual_seed(s)
        nets.append(build_l2d(hidden, hidden_head))
    return nets


def stack(nets, device="cpu", grad: bool = False) -> dict:
    from .policy import stack as _stack

    return _stack(nets, device, grad)


def unstack(P: dict, hidden: int, hidden_head: int) -> list:
    S = next(iter(P.values())).shape[0]
    nets = []
    for s in range(S):
        net = build_l2d(hidden, hidden_head)
        net.load_state_dict({k: v[s].detach().cpu() for k, v in P.items()})
        nets.append(net)
    return nets


def train_l2d(seeds, *, updates: int, episodes: int, n_jobs: int, n_machines: int, kind: str, hidden: int,
              hidden_head: int, lr: float, progress=None, log_every: int = 10, device="cpu",
              max_seconds: float | None = None):
    """L2D's PPO for every seed of ``seeds`` together: ``updates`` updates of ``episodes`` fresh
    random shops each (one episode a shop); returns (one CPU network per seed, {seed: history}).
    A seed's shops (numpy ``[seed, 3]``), noise (torch, seeded ``seed``) and initialisation
    (``torch.manual_seed(seed)``) depend on the seed alone. ``max_seconds``: the first update that
    starts past that much wall time is the last."""
    import time

    import torch

    seeds = [int(s) for s in seeds]
    S = len(seeds)
    P = stack(init_l2d(seeds, hidden, hidden_head), device, grad=True)
    opt = torch.optim.Adam(list(P.values()), lr=lr)
    rngs = [np.random.default_rng([s, 3]) for s in seeds]
    gens = seed_generators(seeds, device)
    history = {s: [] for s in seeds}
    t0 = time.perf_counter()
    for u in range(updates):
        last = u == updates - 1 or (max_seconds is not None and time.perf_counter() - t0 > max_seconds)
        shops = [random_instances(episodes, n_jobs, n_machines, r, kind) for r in rngs]
        mach = torch.as_tensor(np.concatenate([a for a, _ in shops]), device=device)
        dur = torch.as_tensor(np.concatenate([b for _, b in shops]), device=device)
        _, ms, logp, ent, val, rew = rollout(P, mach, dur, S, gens, grad=True)
        loss_s = ppo_loss(logp, ent, val, rew)
        opt.zero_grad()
        loss_s.sum().backward()
        opt.step()
        if u % log_every == 0 or last:
            mm = ms.view(S, episodes).float().mean(1)
            for i, s in enumerate(seeds):
                history[s].append({"step": u, "loss": float(loss_s[i].detach()), "mean_makespan": float(mm[i])})
        if progress is not None:
            progress.update(1)
        if last:
            break
    return unstack(P, hidden, hidden_head), history


def sample_best(nets, mach, dur, samples: int, seeds, chunk: int = 8, device="cpu", greedy: bool = False):
    """Each shop's best makespan (numpy (S, N)) of S seeds' L2D networks from ``samples`` sampled
    episodes (``greedy``: the one greedy episode, L2D's own test rule), seed s's noise from a
    generator seeded ``seeds[s]``; ``mach``/``dur``: (S, N, n, m) int arrays, each seed's own
    shops, or (N, n, m) shared by every seed."""
    import torch

    S = len(nets)
    mach, dur = np.asarray(mach), np.asarray(dur)
    if mach.ndim == 3:
        mach, dur = np.broadcast_to(mach, (S, *mach.shape)), np.broadcast_to(dur, (S, *dur.shape))
    P = stack(nets, device)
    gens = seed_generators(seeds, device)
    k = 1 if greedy else samples
    out = []
    for i in range(0, mach.shape[1], chunk):
        m = torch.tensor(mach[:, i:i + chunk], device=device)
        d = torch.tensor(dur[:, i:i + chunk], device=device)
        n = m.shape[1]
        m, d = (x.repeat_interleave(k, 1).flatten(0, 1) for x in (m, d))
        _, ms = rollout(P, m, d, S, gens, greedy=greedy)
        out.append(ms.view(S, n, k).min(-1).values.cpu())
    return torch.cat(out, 1).numpy()
