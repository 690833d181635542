"""The self-labelled dispatchers: the network, its sampler and self-labelled training, for the
three arms of the study, every verdict seed of an arm trained together (a seed dimension in the
parameters):

- ``single``: one policy, its self-label the best of the ``samples`` sampled sequences of a shop,
  cross-entropy (SLIM's training rule, Corsini et al. 2024, on our network);
- ``multi``: K policies in one network (a shared trunk plus a policy-id embedding: the paper's
  multi-policy self-evolution); policy k samples ``samples / K`` sequences of a shop, its own best
  is its self-label, imitated with intensity w_k = exp(-gap_k / tau), gap_k = C_k / min_k' C_k' - 1
  the relative makespan gap of policy k's label to the best label of the shop (our instantiation
  of the abstract's adaptive imitation intensity); loss = sum_k w_k CE_k / sum_k w_k over shops and
  policies;
- ``blind``: ``multi``'s labels, weights and budget (K groups of ``samples / K`` sequences, each
  group's best imitated with the same intensity) for a network that does not see the policy id:
  one policy. It takes the K policies out and keeps everything else (the control of the
  multi-vs-single check). No reward function anywhere: only comparisons of makespans.

The network scores every job's next operation from the job's features (jsp.Shop.features) and a
context: the mean job embedding plus a learned embedding of the policy id. Parameters are kept
stacked, a leading seed dimension on every tensor (``{name: (S, ...)}``, the names of
:func:`build_net`'s state dict), and applied with batched matrix products, so S seeds train and
sample as one batch; each seed's slice is computed exactly as alone (tested), its draws come from
its own generators, and :class:`PolicyNet` (one seed's network, what models.pt and the MLflow
model hold) runs the same function with S = 1.
"""
from __future__ import annotations

import numpy as np

from .jsp import N_FEATURES, Shop, random_instances

ARMS = ("single", "multi", "blind")


def arm_shape(arm: str, n_policies: int) -> tuple[int, int]:
    """(policies in the network, label groups per shop) of an arm."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    return {"single": (1, 1), "multi": (n_policies, n_policies), "blind": (1, n_policies)}[arm]


def _lin(x, w, b):
    """x (S, N, in) through each seed's linear layer: w (S, out, in), b (S, out). A layer with one
    output is a product and a sum (a batched matrix-vector product gives a seed's slice other last
    bits when S changes; this does not)."""
    import torch

    if w.shape[1] == 1:
        return (x * w).sum(-1, keepdim=True) + b.unsqueeze(1)
    return torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))


def logits(P: dict, feat, mask, pid):
    """Logits (S, R, n) over jobs of S seeds' networks ``P`` (stacked parameters) on their own
    rows: feat (S, R, n, N_FEATURES), mask (S, R, n), pid (S, R) policy ids. Jobs without work
    left get -inf. The head's first layer on [job embedding, context] is applied as the sum of
    its two halves (the context half once per row, not once per job)."""
    import torch

    S, R, n, F = feat.shape
    h = _lin(feat.reshape(S, R * n, F), P["enc.0.weight"], P["enc.0.bias"]).relu_()
    h = _lin(h, P["enc.2.weight"], P["enc.2.bias"]).relu_()
    H = h.shape[-1]
    m = mask.unsqueeze(-1).to(h.dtype)
    emb = torch.gather(P["pol.weight"], 1, pid.unsqueeze(-1).expand(S, R, H))
    ctx = (h.view(S, R, n, H) * m).sum(2) / m.sum(2).clamp(min=1) + emb                   # (S, R, H)
    w0 = P["head.0.weight"]
    x = _lin(h, w0[:, :, :H], P["head.0.bias"]).view(S, R, n, H)
    x = (x + torch.bmm(ctx, w0[:, :, H:].transpose(1, 2)).unsqueeze(2)).relu_()
    out = _lin(x.view(S, R * n, H), P["head.2.weight"], P["head.2.bias"]).view(S, R, n)
    return out.masked_fill(~mask, -float("inf"))


def build_net(n_policies: int, hidden: int):
    """One seed's network (initialised from torch's global generator: seed it first)."""
    from torch import nn

    class PolicyNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.n_policies, self.hidden = n_policies, hidden
            self.enc = nn.Sequential(nn.Linear(N_FEATURES, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
            self.pol = nn.Embedding(n_policies, hidden)
            self.head = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

        def forward(self, feat, mask, pid):
            """Logits (B, n) over jobs; jobs without work left get -inf."""
            P = {k: v.unsqueeze(0) for k, v in self.state_dict().items()}
            return logits(P, feat.unsqueeze(0), mask.unsqueeze(0), pid.unsqueeze(0))[0]

        def stacked(self):
            return {k: v.detach().unsqueeze(0) for k, v in self.state_dict().items()}

    return PolicyNet()


def init_nets(n_policies: int, hidden: int, seeds) -> list:
    """One network per seed, each initialised under ``torch.manual_seed(seed)``."""
    import torch

    nets = []
    for s in seeds:
        torch.manual_seed(s)
        nets.append(build_net(n_policies, hidden))
    return nets


def stack(nets, device="cpu", grad: bool = False) -> dict:
    """The seeds' networks as stacked parameters ``{name: (S, ...)}`` on ``device``."""
    import torch

    P = {k: torch.stack([n.state_dict()[k].detach() for n in nets]).to(device) for k in nets[0].state_dict()}
    if grad:
        for v in P.values():
            v.requires_grad_(True)
    return P


def unstack(P: dict, n_policies: int, hidden: int) -> list:
    """Stacked parameters back into one CPU network per seed."""
    S = next(iter(P.values())).shape[0]
    nets = []
    for s in range(S):
        net = build_net(n_policies, hidden)
        net.load_state_dict({k: v[s].detach().cpu() for k, v in P.items()})
        nets.append(net)
    return nets


def gumbel(gens, shape, device):
    """Gumbel noise (S, *shape): seed s's slice from its own generator ``gens[s]``."""
    import torch

    u = torch.stack([torch.rand(shape, generator=g, device=device) for g in gens])
    return -torch.log(-torch.log(u.clamp_(1e-12, 1 - 1e-7)))


def rollout(P: dict, mach, dur, pid, gens=None, greedy: bool = False):
    """Sample (or greedily take) one dispatch sequence per row of S seeds' networks: mach/dur
    (S * R, n, m) long tensors, seed-major (seed s owns rows s*R .. s*R + R - 1), pid (S, R),
    ``gens`` S generators on the rows' device. Returns actions (S * R, n*m) and makespans
    (S * R,). No gradients."""
    import torch

    S, R = pid.shape
    with torch.no_grad():
        shop = Shop(mach, dur)
        n, m = shop.n, shop.m
        acts = torch.empty(shop.B, n * m, dtype=torch.long, device=dur.device)
        for t in range(n * m):
            mask = shop.mask()
            lg = logits(P, shop.features().view(S, R, n, N_FEATURES), mask.view(S, R, n), pid)
            a = lg.argmax(-1) if greedy else (lg + gumbel(gens, (R, n), lg.device)).argmax(-1)
            a = a.view(-1)
            acts[:, t] = a
            shop.step(a)
        return acts, shop.makespan()


def replay_ce(P: dict, mach, dur, pid, acts):
    """Mean per-step cross-entropy (S, R) of the given dispatch sequences (teacher forcing), with
    gradients; rows as in :func:`rollout`."""
    import torch

    S, R = pid.shape
    shop = Shop(mach, dur)
    n, m = shop.n, shop.m
    ce = torch.zeros(S, R, device=dur.device)
    for t in range(n * m):
        mask = shop.mask()
        lg = logits(P, shop.features().view(S, R, n, N_FEATURES), mask.view(S, R, n), pid)
        ce = ce + torch.nn.functional.cross_entropy(lg.reshape(S * R, n), acts[:, t],
                                                    reduction="none").view(S, R)
        shop.step(acts[:, t])
    return ce / (n * m)


def label_weights(best, tau: float):
    """Adaptive imitation intensity (..., K) from the label groups' best makespans ``best``
    (..., K): exp(-gap / tau), gap = best / best.min(groups) - 1 (tau = inf: all ones)."""
    import torch

    if tau <= 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    if np.isinf(tau):
        return torch.ones_like(best)
    gap = best / best.min(-1, keepdim=True).values - 1
    return torch.exp(-gap / tau)


def seed_generators(seeds, device="cpu"):
    """The sampling generators of the seeds' training (torch, on ``device``)."""
    import torch

    return [torch.Generator(device=device).manual_seed(int(s)) for s in seeds]


def train_arm(arm: str, seeds, *, steps: int, instances: int, samples: int, n_jobs: int, n_machines: int,
              kind: str, hidden: int, lr: float, n_policies: int, tau: float, progress=None, log_every: int = 10,
              device="cpu", max_seconds: float | None = None):
    """Self-labelled training of one arm for every seed of ``seeds`` together; returns (one CPU
    network per seed, {seed: history}). A seed's training shops (numpy ``[seed, 1]``), sampling
    noise (torch, seeded ``seed``) and initialisation (``torch.manual_seed(seed)``) depend on the
    seed alone, and are the same for every arm at a seed. ``max_seconds``: stop after the first
    step that ends past that much wall time."""
    import time

    import torch

    k_net, k_lab = arm_shape(arm, n_policies)
    if samples % k_lab:
        raise ValueError(f"samples ({samples}) must be a multiple of the arm's {k_lab} label groups")
    seeds = [int(s) for s in seeds]
    S = len(seeds)
    P = stack(init_nets(k_net, hidden, seeds), device, grad=True)
    opt = torch.optim.Adam(list(P.values()), lr=lr)
    rngs = [np.random.default_rng([s, 1]) for s in seeds]
    gens = seed_generators(seeds, device)
    per = samples // k_lab
    group = torch.arange(k_lab, device=device).repeat_interleave(per).repeat(instances)   # (R,) label group
    pid = (group if arm == "multi" else torch.zeros_like(group)).expand(S, -1)           # what the net sees
    R = instances * samples
    within = (torch.arange(instances, device=device).unsqueeze(1) * samples
              + torch.arange(k_lab, device=device).unsqueeze(0) * per)                     # (I, K) first rows
    offset = (torch.arange(S, device=device) * R).view(S, 1, 1)
    history = {s: [] for s in seeds}
    t0 = time.perf_counter()
    for step in range(steps):
        last = step == steps - 1
        shops = [random_instances(instances, n_jobs, n_machines, r, kind) for r in rngs]
        mach = torch.as_tensor(np.concatenate([a for a, _ in shops]), device=device).repeat_interleave(samples, 0)
        dur = torch.as_tensor(np.concatenate([b for _, b in shops]), device=device).repeat_interleave(samples, 0)
        acts, ms = rollout(P, mach, dur, pid, gens)
        ms = ms.view(S, instances, k_lab, per)
        best, arg = ms.min(-1)                                                    # (S, I, K)
        rows = (offset + within.unsqueeze(0) + arg).reshape(-1)                  # (S * I * K,)
        w = label_weights(best, tau).view(S, -1)
        ce = replay_ce(P, mach[rows], dur[rows], pid.reshape(-1)[rows].view(S, -1), acts[rows])
        loss_s = (w * ce).sum(1) / w.sum(1)
        opt.zero_grad()
        loss_s.sum().backward()
        opt.step()
        if max_seconds is not None and time.perf_counter() - t0 > max_seconds:
            last = True
        if step % log_every == 0 or last:
            bm, mm, wm = best.min(-1).values.mean(1), ms.float().mean((1, 2, 3)), w.mean(1)
            for i, s in enumerate(seeds):
                history[s].append({"step": step, "loss": float(loss_s[i].detach()), "best_makespan": float(bm[i]),
                                   "mean_makespan": float(mm[i]), "weight_mean": float(wm[i])})
        if progress is not None:
            progress.update(1)
        if last:
            break
    return unstack(P, k_net, hidden), history


def sample_best(nets, mach, dur, samples: int, seeds, chunk: int = 16, device=None):
    """For S seeds' networks of one arm (``nets``, one per seed, same policy count K), each on its
    own shops (``mach``/``dur``: (S, N, n, m) int arrays, or (N, n, m) shared by every seed): each
    shop's best makespan per policy (numpy (S, N, K)) from ``samples`` sampled sequences split
    evenly over the K policies, and its best dispatch sequence overall (numpy (S, N, n*m), the
    first best sample). Seed s's noise comes from a generator seeded ``seeds[s]``."""
    import torch

    K, S = nets[0].n_policies, len(nets)
    if samples % K:
        raise ValueError(f"samples ({samples}) must be a multiple of the net's {K} policies")
    mach, dur = np.asarray(mach), np.asarray(dur)
    if mach.ndim == 3:
        mach, dur = np.broadcast_to(mach, (S, *mach.shape)), np.broadcast_to(dur, (S, *dur.shape))
    per = samples // K
    device = next(nets[0].parameters()).device if device is None else torch.device(device)
    P = stack(nets, device)
    gens = seed_generators(seeds, device)
    out, seqs = [], []
    for i in range(0, mach.shape[1], chunk):
        m = torch.tensor(mach[:, i:i + chunk], device=device)
        d = torch.tensor(dur[:, i:i + chunk], device=device)
        n = m.shape[1]
        m, d = (x.repeat_interleave(samples, 1).flatten(0, 1) for x in (m, d))
        pid = torch.arange(K, device=device).repeat_interleave(per).repeat(n).expand(S, -1)
        acts, ms = rollout(P, m, d, pid, gens)
        ms = ms.view(S, n, samples)
        out.append(ms.view(S, n, K, per).min(-1).values.cpu())
        best = ms.argmin(-1) + torch.arange(n, device=device) * samples + (torch.arange(S, device=device) * n
                                                                          * samples).unsqueeze(1)
        seqs.append(acts[best.reshape(-1)].view(S, n, -1).cpu())
    return torch.cat(out, 1).numpy(), torch.cat(seqs, 1).numpy()


def best_of(nets, mach, dur, samples: int, seeds, chunk: int = 16):
    """Best makespan per shop (numpy (S, N)) of each seed's network from ``samples`` sampled
    sequences (split evenly over its policies), and each policy's best (S, N, K); shops as in
    :func:`sample_best`."""
    per_policy, _ = sample_best(nets, mach, dur, samples, seeds, chunk)
    return per_policy.min(-1), per_policy
