"""The dispatching policy, its sampler and self-labelled training (single policy = SLIM, K
policies in one network = the paper's multi-policy self-evolution).

The network scores every job's next operation from the job's features (jsp.Shop.features) and a
context: the mean job embedding plus a learned embedding of the policy id (K of them; K = 1 is
SLIM's single policy). One dispatch at a time, batched over instances x samples.

Training step (both methods, same budget): draw ``instances`` random training shops, sample
``samples`` dispatch sequences per shop, and take the self-labels:
- single (K = 1): the best of the ``samples`` sequences; loss = cross-entropy of its actions
  (SLIM, Corsini et al. 2024);
- multi (K > 1): every policy k samples ``samples / K`` sequences; its self-label is its own
  best sequence, imitated with intensity w_k = exp(-gap_k / tau), gap_k = C_k / min_k' C_k' - 1
  the relative makespan gap of policy k's label to the best label of the shop, so each policy
  keeps its own (diverse) strategy while poor labels are imitated weakly; the loss is
  sum_k w_k CE_k / sum_k w_k over shops and policies. tau = inf gives uniform intensity (the
  ablation). No reward function anywhere: only comparisons of makespans.
"""
from __future__ import annotations

import numpy as np

from .jsp import N_FEATURES, Shop, random_instances


def build_net(n_policies: int, hidden: int):
    import torch
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
            h = self.enc(feat)
            m = mask.unsqueeze(-1).float()
            ctx = (h * m).sum(1) / m.sum(1).clamp(min=1) + self.pol(pid)
            x = torch.cat([h, ctx.unsqueeze(1).expand_as(h)], -1)
            return self.head(x).squeeze(-1).masked_fill(~mask, -float("inf"))

    return PolicyNet()


def rollout(net, mach, dur, pid, gen=None, greedy: bool = False):
    """Sample (or greedily take) one dispatch sequence per row: mach/dur (B, n, m) long tensors,
    pid (B,) policy ids, all on one device (``gen``, a generator on it). Returns actions
    (B, n*m) and makespans (B,). No gradients."""
    import torch

    with torch.no_grad():
        shop = Shop(mach, dur)
        acts = torch.empty(shop.B, shop.n * shop.m, dtype=torch.long, device=dur.device)
        for t in range(shop.n * shop.m):
            mask = shop.mask()
            logits = net(shop.features(), mask, pid)
            if greedy:
                a = logits.argmax(1)
            else:   # Gumbel-max: a categorical sample drawn from the seeded generator
                u = torch.rand(logits.shape, generator=gen, device=logits.device).clamp_(1e-12, 1 - 1e-7)
                a = (logits - torch.log(-torch.log(u))).argmax(1)
            acts[:, t] = a
            shop.step(a)
        return acts, shop.makespan()


def replay_ce(net, mach, dur, pid, acts):
    """Mean per-step cross-entropy (B,) of the given dispatch sequences (teacher forcing), with
    gradients."""
    import torch

    shop = Shop(mach, dur)
    ce = torch.zeros(shop.B, device=dur.device)
    for t in range(shop.n * shop.m):
        mask = shop.mask()
        logits = net(shop.features(), mask, pid)
        ce = ce + torch.nn.functional.cross_entropy(logits, acts[:, t], reduction="none")
        shop.step(acts[:, t])
    return ce / (shop.n * shop.m)


def label_weights(best, tau: float):
    """Adaptive imitation intensity (I, K) from the policies' best makespans ``best`` (I, K):
    exp(-gap / tau), gap = best / best.min(policies) - 1 (tau = inf: all ones)."""
    import torch

    if tau <= 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    if np.isinf(tau):
        return torch.ones_like(best)
    gap = best / best.min(1, keepdim=True).values - 1
    return torch.exp(-gap / tau)


def train_policy(n_policies: int, *, steps: int, instances: int, samples: int, n_jobs: int, n_machines: int,
                 kind: str, hidden: int, lr: float, tau: float, seed: int, progress=None, log_every: int = 10,
                 device="cpu", max_seconds: float | None = None):
    """Self-labelled training on ``device``; returns (net, history). The instance stream and the
    sampling noise depend only on ``seed`` (the same training shops for every method at a seed;
    on CPU the same bits as before the device argument: the net is initialised on CPU and moved,
    the noise comes from a generator on the device). ``max_seconds``: stop after the first step
    that ends past that much wall time (the last step is always in the history)."""
    import time

    import torch

    if samples % n_policies:
        raise ValueError(f"samples ({samples}) must be a multiple of n_policies ({n_policies})")
    torch.manual_seed(seed)
    net = build_net(n_policies, hidden).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    rng = np.random.default_rng([seed, 1])
    gen = torch.Generator(device=device).manual_seed(seed)
    per = samples // n_policies
    pid = torch.arange(n_policies, device=device).repeat_interleave(per).repeat(instances)   # (I*samples,)
    ar_i, ar_k = torch.arange(instances, device=device), torch.arange(n_policies, device=device)
    history, t0 = [], time.perf_counter()
    for step in range(steps):
        last = step == steps - 1
        mach, dur = (torch.as_tensor(a, device=device) for a in random_instances(instances, n_jobs, n_machines,
                                                                                 rng, kind))
        M = mach.repeat_interleave(samples, 0)
        D = dur.repeat_interleave(samples, 0)
        acts, ms = rollout(net, M, D, pid, gen)
        ms = ms.view(instances, n_policies, per)
        best, arg = ms.min(-1)                                                      # (I, K)
        rows = (ar_i.unsqueeze(1) * samples + ar_k.unsqueeze(0) * per + arg).reshape(-1)
        w = label_weights(best, tau).reshape(-1)
        ce = replay_ce(net, M[rows], D[rows], pid[rows], acts[rows])
        loss = (w * ce).sum() / w.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if max_seconds is not None and time.perf_counter() - t0 > max_seconds:
            last = True
        if step % log_every == 0 or last:
            history.append({"step": step, "loss": float(loss.detach()), "best_makespan": float(best.min(1).values.mean()),
                            "mean_makespan": float(ms.float().mean()), "weight_mean": float(w.mean())})
        if progress is not None:
            progress.update(1)
        if last:
            break
    return net, history


def sample_best(net, mach, dur, samples: int, seed: int, chunk: int = 16, device=None):
    """Each instance's best makespan per policy (numpy (N, K)) from ``samples`` sampled
    sequences, split evenly over the net's policies (samples / K each), and its best dispatch
    sequence overall (numpy (N, n*m), the first best sample). Runs on the net's device;
    ``mach``/``dur``: (N, n, m) int arrays."""
    import torch

    K = net.n_policies
    if samples % K:
        raise ValueError(f"samples ({samples}) must be a multiple of the net's {K} policies")
    per = samples // K
    device = next(net.parameters()).device if device is None else torch.device(device)
    gen = torch.Generator(device=device).manual_seed(seed)
    out, seqs = [], []
    was_training = net.training
    net.eval()
    for i in range(0, len(mach), chunk):
        m = torch.as_tensor(mach[i:i + chunk], device=device).repeat_interleave(samples, 0)
        d = torch.as_tensor(dur[i:i + chunk], device=device).repeat_interleave(samples, 0)
        n = m.shape[0] // samples
        pid = torch.arange(K, device=device).repeat_interleave(per).repeat(n)
        acts, ms = rollout(net, m, d, pid, gen)
        out.append(ms.view(n, K, per).min(-1).values.cpu())
        best = ms.view(n, samples).argmin(1) + torch.arange(n, device=device) * samples
        seqs.append(acts[best].cpu())
    net.train(was_training)
    return torch.cat(out).numpy(), torch.cat(seqs).numpy()


def best_of(net, mach, dur, samples: int, seed: int, chunk: int = 16):
    """Best makespan per instance (numpy (N,)) from ``samples`` sampled sequences, split evenly
    over the net's policies (samples / K each), and each policy's best (N, K); on the net's device."""
    per_policy, _ = sample_best(net, mach, dur, samples, seed, chunk)
    return per_policy.min(1), per_policy
