"""The policies: a POMO-style teacher (heavy encoder, light decoder: one attention step a move)
and the multi-task heavy-decoder student (light encoder; every move re-runs attention layers over
the current node and the nodes left, as LEHD does), their multi-start rollouts, REINFORCE with
POMO's shared baseline, distillation (KL to the teacher's action distribution) and R3C.

Both policies read the same node layout (vrp.features) and the same context (vrp.Env.state), so
a teacher can be applied zero-shot to any variant, and the student sees the variant flags.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from . import vrp

CONTEXT = 4          # vrp.Env.state: load left, time, open flag, tw flag


class Teacher(nn.Module):
    """POMO-style: ``layers`` self-attention layers encode the nodes once; a move is one
    multi-head glimpse from the context (current node, load, time, flags) and a clipped pointer."""

    def __init__(self, dim: int, layers: int, heads: int):
        super().__init__()
        self.dim, self.heads = dim, heads
        self.embed = nn.Linear(vrp.N_FEATURES, dim)
        self.encoder = nn.ModuleList(nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True)
                                     for _ in range(layers))
        self.kv = nn.Linear(dim, 3 * dim, bias=False)
        self.query = nn.Linear(dim + CONTEXT, dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def encode(self, feat):
        h = self.embed(feat)
        for layer in self.encoder:
            h = layer(h)
        k, v, kp = self.kv(h).chunk(3, -1)
        return {"h": h, "k": k, "v": v, "kp": kp}

    def logits(self, cache, env):
        h = cache["h"]
        b, p = env.cur.shape
        hc = h[env.bidx, env.cur]                                                      # (B, P, d)
        q = self.query(torch.cat([hc, env.state()], -1))
        mask = env.mask()
        H, dh = self.heads, self.dim // self.heads
        qh = q.view(b, p, H, dh).transpose(1, 2)                                        # (B, H, P, dh)
        kh = cache["k"].view(b, -1, H, dh).transpose(1, 2)
        vh = cache["v"].view(b, -1, H, dh).transpose(1, 2)
        att = (qh @ kh.transpose(-1, -2)) / math.sqrt(dh)
        att = att.masked_fill(~mask[:, None], -1e9).softmax(-1)
        g = self.out((att @ vh).transpose(1, 2).reshape(b, p, self.dim))
        score = 10.0 * torch.tanh(g @ cache["kp"].transpose(-1, -2) / math.sqrt(self.dim))
        return score.masked_fill(~mask, -math.inf)


class Student(nn.Module):
    """Heavy decoder: a linear embedding (the light encoder); at every move the tokens
    [context(current node, load, time, flags), depot, customers not yet visited] pass ``layers``
    attention layers, and a linear head scores the nodes.

    With ``compact`` (the default) the customers left are gathered into the fewest token slots
    the batch needs (as LEHD drops the visited nodes), the rest of a row padded and masked; with
    ``compact = False`` every customer keeps its slot and the visited ones are masked. The layers
    have no positional encoding, so the two compute the same scores (tests/mtl_kd); the compact
    one does less work as the tour fills."""

    def __init__(self, dim: int, layers: int, heads: int):
        super().__init__()
        self.embed = nn.Linear(vrp.N_FEATURES, dim)
        self.context = nn.Linear(dim + CONTEXT, dim)
        self.decoder = nn.ModuleList(nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True)
                                     for _ in range(layers))
        self.head = nn.Linear(dim, 1)
        self.compact = True

    def encode(self, feat):
        return {"h": self.embed(feat)}

    def logits(self, cache, env):
        h = cache["h"]
        b, p = env.cur.shape
        m, d = h.shape[1], h.shape[-1]
        ctx = self.context(torch.cat([h[env.bidx, env.cur], env.state()], -1))            # (B, P, d)
        left = ~env.visited[:, :, 1:]                                                       # (B, P, n)
        if self.compact:
            k = int(left.sum(-1).max())
            slot = torch.argsort((~left).to(torch.int8), dim=-1, stable=True)[..., :k]     # customers left first
            live = left.gather(-1, slot)                                                    # (B, P, K)
            node = slot + 1
            cust = h[env.bidx[..., None], node]                                             # (B, P, K, d)
        else:
            node, live = None, left
            cust = h[:, None, 1:].expand(b, p, m - 1, d)
        tok = torch.cat([ctx[:, :, None], h[:, None, :1].expand(b, p, 1, d), cust], 2)  # (B, P, 2+K, d)
        width = tok.shape[2]
        tok = tok.reshape(b * p, width, d)
        hide = torch.cat([torch.zeros(b, p, 2, dtype=torch.bool, device=h.device), ~live], -1).reshape(b * p, width)
        for layer in self.decoder:
            tok = layer(tok, src_key_padding_mask=hide)
        score = self.head(tok[:, 1:]).reshape(b, p, width - 1)
        if node is not None:                   # back to one score per node
            cust_score = score[..., 1:].masked_fill(~live, -math.inf)
            full = torch.full((b, p, m), -math.inf, dtype=score.dtype, device=score.device)
            full[..., :1] = score[..., :1]
            score = full.scatter(-1, node, cust_score)
        return score.masked_fill(~env.mask(), -math.inf)


def make(kind: str, p) -> nn.Module:
    if kind == "teacher":
        return Teacher(p.dim, p.layers, p.heads)
    if kind == "student":
        return Student(p.dim, p.layers, p.heads)
    raise ValueError(f"unknown model kind {kind!r}; known: teacher, student")


# ---- rollouts -------------------------------------------------------------------------------
def device_of(model) -> torch.device:
    """Where ``model``'s weights are: its rollouts build their tensors there (numpy instances in,
    the batch moved to the model's device)."""
    return next(model.parameters()).device


def starts_for(inst: dict, pomo: int, hidden=None) -> torch.Tensor:
    """(B, P) first customers of the P rollouts: the customers in turn (POMO), skipping hidden
    (padding) nodes."""
    b, m = inst["demand"].shape
    out = np.zeros((b, pomo), np.int64)
    for i in range(b):
        live = np.arange(1, m) if hidden is None else np.flatnonzero(~hidden[i, 1:]) + 1
        if len(live) == 0:
            live = np.zeros(1, np.int64)          # nothing to serve: the rollouts stay at the depot
        out[i] = live[np.arange(pomo) % len(live)]
    return torch.as_tensor(out)


def rollout(model, inst: dict, pomo: int, greedy: bool, gen=None, record: bool = False, hidden=None,
            max_steps: int | None = None):
    """Multi-start construction. Returns (cost (B, P), sum log-prob (B, P), actions (B, P, T)
    and, with ``record``, the visited states and the policy's probabilities at each free move)."""
    dev = device_of(model)
    env = vrp.Env(inst, pomo, device=dev)
    if hidden is not None:
        env.visited[:] = torch.as_tensor(hidden, device=dev)[:, None, :]
        env.visited[:, :, 0] = False
    cache = model.encode(torch.as_tensor(vrp.features(inst), device=dev))
    first = starts_for(inst, pomo, hidden).to(dev)
    env.step(first)
    actions, logp, states = [first], torch.zeros(env.B, pomo, device=dev), []
    limit = max_steps or 3 * env.M + 2
    for _ in range(limit):
        if env.finished():
            break
        score = model.logits(cache, env)
        lp = torch.log_softmax(score, -1)
        if greedy:
            a = score.argmax(-1)
        else:
            a = sample(lp.exp(), gen)
        if record:
            states.append({"cur": env.cur.clone(), "load": env.load.clone(), "time": env.time.clone(),
                           "visited": env.visited.clone(), "probs": lp.exp().detach()})
        logp = logp + lp.gather(-1, a[..., None]).squeeze(-1)
        env.step(a)
        actions.append(a)
    else:
        raise RuntimeError(f"rollout did not finish in {limit} moves")
    return env.cost, logp, torch.stack(actions, -1), states


def sample(probs, gen):
    """One draw from each row's distribution over the last axis, by the inverse CDF (one uniform
    a row from ``gen``): faster than ``torch.multinomial`` on CPU for these small rows."""
    u = torch.rand(probs.shape[:-1] + (1,), generator=gen, device=probs.device, dtype=probs.dtype)
    cdf = probs.cumsum(-1)
    a = (cdf <= u * cdf[..., -1:]).sum(-1)                                   # cdf[a-1] <= v < cdf[a]
    return torch.minimum(a, (probs > 0).long().cumsum(-1).argmax(-1))      # never past the last feasible node


def solve(model, inst: dict, pomo: int | None = None, hidden=None):
    """Greedy multi-start inference: (cost (B,), routes of the best start per instance)."""
    n = inst["demand"].shape[1] - 1
    with torch.no_grad():
        cost, _, acts, _ = rollout(model, inst, pomo or n, greedy=True, hidden=hidden)
    cost, acts = cost.cpu(), acts.cpu()
    best = cost.argmin(-1)
    routes = [vrp.routes_from_actions(acts[i, best[i]].tolist()) for i in range(cost.shape[0])]
    return cost.min(-1).values.numpy(), routes


def reinforce_step(model, opt, inst: dict, gen, starts: int | None = None) -> float:
    """One REINFORCE step with POMO's shared baseline (the mean over the starts: ``starts`` of
    them, the first customers in turn; by default every customer, n)."""
    n = inst["demand"].shape[1] - 1
    cost, logp, _, _ = rollout(model, inst, starts or n, greedy=False, gen=gen)
    adv = cost - cost.mean(-1, keepdim=True)
    loss = (adv.detach() * logp).mean()
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return float(cost.mean())


def distill_step(student, opt, teachers: dict, insts: dict, gen, states_per_variant: int,
                 starts: int | None = None) -> float:
    """One distillation step over every seen variant: each teacher samples its multi-start
    rollouts (``starts`` of them, by default n) on a batch of its variant; ``states_per_variant`` of the visited states (those with more than
    one feasible move) are drawn, and the student is fitted to the teacher's action distribution
    there (KL(teacher || student))."""
    losses = []
    for variant, inst in insts.items():
        n = inst["demand"].shape[1] - 1
        with torch.no_grad():
            _, _, _, states = rollout(teachers[variant], inst, starts or n, greedy=False, gen=gen, record=True)
        cat = {k: torch.cat([s[k] for s in states], 1) for k in states[0]}            # (B, T*P, ...)
        choices = (cat["probs"] > 0).sum(-1) > 1
        rows = torch.nonzero(choices, as_tuple=True)
        pick = torch.randperm(len(rows[0]), generator=gen, device=gen.device)[:states_per_variant]
        b_idx, s_idx = rows[0][pick], rows[1][pick]
        sub = vrp.take(inst, b_idx.cpu().numpy())
        senv = vrp.Env(sub, 1, device=b_idx.device)
        senv.cur = cat["cur"][b_idx, s_idx][:, None]
        senv.load = cat["load"][b_idx, s_idx][:, None]
        senv.time = cat["time"][b_idx, s_idx][:, None]
        senv.visited = cat["visited"][b_idx, s_idx][:, None]
        pt = cat["probs"][b_idx, s_idx][:, None]
        score = student.logits(student.encode(torch.as_tensor(vrp.features(sub), device=b_idx.device)), senv)
        ls = torch.log_softmax(score, -1)
        kl = torch.where(pt > 0, pt * (torch.log(pt.clamp_min(1e-12)) - ls), torch.zeros_like(pt)).sum(-1)
        losses.append(kl.mean())
    loss = torch.stack(losses).mean()
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(student.parameters(), 1.0)
    opt.step()
    return float(loss.detach())


# ---- training loops (the train stage's, and benchmarks/mtl_kd/paper_gpu.py's) ------------------
def train_teacher(variant: str, n: int, p, seed: int, k: int, device="cpu", progress=None, max_seconds=None,
                  starts: int | None = None):
    """A teacher for ``variant`` by ``p.steps`` REINFORCE steps on ``device`` (fewer if
    ``max_seconds`` of wall time run out first), each rolling out ``starts`` starts an instance
    (by default n); (net, sampled-cost curve)."""
    import time

    torch.manual_seed(seed * 1000 + k)
    net = make("teacher", p).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=p.lr)
    rng = np.random.default_rng([seed, 2, k])
    gen = torch.Generator(device=device).manual_seed(seed * 1000 + k)
    curve, t0 = [], time.perf_counter()
    for _ in range(p.steps):
        curve.append(reinforce_step(net, opt, vrp.generate(variant, n, p.batch, rng), gen, starts))
        if progress is not None:
            progress.update()
        if max_seconds is not None and time.perf_counter() - t0 > max_seconds:
            break
    return net.eval(), curve


def distill(teachers: dict, n: int, p, seed: int, device="cpu", progress=None, max_seconds=None,
            starts: int | None = None):
    """The student by ``p.steps`` distillation steps over every seen variant on ``device`` (fewer
    if ``max_seconds`` of wall time run out first), the teachers rolling out ``starts`` starts an
    instance (by default n); (net, KL curve)."""
    import time

    torch.manual_seed(seed * 1000 + 99)
    net = make("student", p).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=p.lr)
    rng = np.random.default_rng([seed, 3])
    gen = torch.Generator(device=device).manual_seed(seed * 1000 + 99)
    curve, t0 = [], time.perf_counter()
    for _ in range(p.steps):
        batch = {v: vrp.generate(v, n, p.batch, rng) for v in teachers}
        curve.append(distill_step(net, opt, teachers, batch, gen, p.states_per_variant, starts))
        if progress is not None:
            progress.update()
        if max_seconds is not None and time.perf_counter() - t0 > max_seconds:
            break
    return net.eval(), curve


def train_control(variants: list, n: int, net_p, p, seed: int, device="cpu", progress=None,
                  starts: int | None = None):
    """The RL-only multi-task model (the musts' control, POMO-MTL's recipe): a light-decoder net
    of the teachers' shape (``net_p``) trained by ``p.steps`` REINFORCE steps with POMO's shared
    baseline, each step a batch of ``p.batch`` instances holding the same number of every variant
    (the flags tell them apart, as they tell the student), ``starts`` starts an instance (by
    default n); no teacher, no distillation. (net, sampled-cost curve)."""
    torch.manual_seed(seed * 1000 + 50)
    net = make("teacher", net_p).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=p.lr)
    rng = np.random.default_rng([seed, 5])
    gen = torch.Generator(device=device).manual_seed(seed * 1000 + 50)
    per = p.batch // len(variants)
    curve = []
    for _ in range(p.steps):
        batch = vrp.concat([vrp.generate(v, n, per, rng) for v in variants])
        curve.append(reinforce_step(net, opt, batch, gen, starts))
        if progress is not None:
            progress.update()
    return net.eval(), curve


def swap_xy(inst: dict) -> dict:
    """The instance mirrored on the diagonal (x and y swapped): every distance, demand and window
    is the same, so a solution of one is a solution of the other at the same cost (one of POMO's
    eight augmentations)."""
    return {**inst, "xy": np.ascontiguousarray(inst["xy"][..., ::-1])}


# ---- R3C: random reordering re-construction ---------------------------------------------------
def r3c(model, inst: dict, routes: list[list[list[int]]], rounds: int, segment: int, rng) -> list[list[list[int]]]:
    """Random Reordering Re-Construction: each round shuffles the order of every solution's
    routes, takes a run of consecutive routes (at most ``segment`` customers, at least two routes
    when they fit), rebuilds those customers from the depot with the model's greedy multi-start,
    and keeps the rebuilt routes when they are shorter. Routes are independent in every variant
    here (each leaves the depot at time 0 with a full load), so any run of them is a sub-instance."""
    b, m = inst["demand"].shape
    routes = [list(map(list, r)) for r in routes]
    for _ in range(rounds):
        picks, sub = [], {k: np.zeros((b, segment + 1) + v.shape[2:], v.dtype) if v.ndim > 1 else v.copy()
                         for k, v in inst.items()}
        hidden = np.ones((b, segment + 1), bool)
        hidden[:, 0] = False
        for i in range(b):
            order = rng.permutation(len(routes[i]))
            first = int(rng.integers(len(order)))
            chosen, count = [], 0
            for j in range(len(order)):
                r = routes[i][order[(first + j) % len(order)]]
                if count + len(r) > segment:
                    break
                chosen.append(int(order[(first + j) % len(order)]))
                count += len(r)
            picks.append(chosen)
            nodes = [0] + [c for k in chosen for c in routes[i][k]]
            sub["xy"][i, :] = inst["xy"][i, 0]
            sub["window"][i, :] = inst["window"][i, 0]
            for key in ("xy", "demand", "window"):
                sub[key][i, :len(nodes)] = inst[key][i, nodes]
            hidden[i, 1:len(nodes)] = False
        if not any(len(c) >= 1 for c in picks):
            continue
        with torch.no_grad():
            _, new = solve(model, sub, pomo=segment, hidden=hidden)
        for i in range(b):
            if not picks[i]:
                continue
            nodes = [0] + [c for k in picks[i] for c in routes[i][k]]
            old = [routes[i][k] for k in picks[i]]
            rebuilt = [[nodes[c] for c in r] for r in new[i]]
            if vrp.route_cost(inst, i, rebuilt) < vrp.route_cost(inst, i, old) - 1e-9:
                keep = [r for k, r in enumerate(routes[i]) if k not in set(picks[i])]
                routes[i] = keep + rebuilt
    return routes


# ---- weights on disk and the MLflow model -----------------------------------------------------
def save_weights(folder, nets: dict, config: dict) -> None:
    """``nets`` ({name: module}) as ``<name>.pt`` state dicts beside ``config.json``."""
    import json
    from pathlib import Path

    folder = Path(folder)
    for name, net in nets.items():
        torch.save(net.cpu().state_dict(), folder / f"{name}.pt")       # CPU tensors: loadable anywhere
    (folder / "config.json").write_text(json.dumps(config, sort_keys=True, indent=1))


class _Net:
    def __init__(self, d: dict):
        self.dim, self.layers, self.heads = d["dim"], d["layers"], d["heads"]


def load_weights(folder) -> tuple[dict, dict]:
    """The nets and config that :func:`save_weights` wrote (``weights_only`` loading)."""
    import json
    from pathlib import Path

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    nets = {}
    for name, kind in config["nets"].items():
        net = make(kind, _Net(config[kind]))
        net.load_state_dict(torch.load(folder / f"{name}.pt", weights_only=True, map_location="cpu"))
        nets[name] = net.eval()
    return nets, config


def save_mlflow(target, weights_dir, example: dict) -> None:
    """The student as an MLflow pyfunc model folder at ``target`` (models from code:
    stages/mtl_kd/pyfunc.py; the weights are an artifact, nothing is pickled), with the instances
    ``example`` (vrp's arrays) as its input example, from which MLflow infers its signature."""
    from pathlib import Path

    from stages.common.mlmodel import save_pyfunc

    save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights_dir},
                input_example=frame_from_instances(example))


def frame_from_instances(inst: dict):
    """vrp's instance arrays as the pandas frame the pyfunc takes (:func:`instances_from_frame`'s
    inverse): lists of floats (x, y, tw_start, tw_end) and ints (demand), int flags."""
    import pandas as pd

    return pd.DataFrame({"x": inst["xy"][..., 0].tolist(), "y": inst["xy"][..., 1].tolist(),
                         "demand": inst["demand"].tolist(), "tw_start": inst["window"][..., 0].tolist(),
                         "tw_end": inst["window"][..., 1].tolist(), "capacity": inst["capacity"].tolist(),
                         "open": inst["open"].tolist(), "tw": inst["tw"].tolist()})


def instances_from_frame(df) -> dict:
    """A pandas frame (one row an instance: x, y, demand, tw_start, tw_end as lists with the
    depot first; capacity, open, tw) as vrp's instance arrays."""
    need = {"x", "y", "demand", "tw_start", "tw_end", "capacity", "open", "tw"}
    missing = need - set(df.columns)
    if missing:
        raise ValueError(f"mtl_kd student: the input needs the columns {sorted(need)}; missing {sorted(missing)}")
    sizes = {len(x) for x in df["x"]}
    if len(sizes) != 1:
        raise ValueError(f"mtl_kd student: every instance of one call needs the same size, got {sorted(sizes)}")
    xy = np.stack([np.stack([np.asarray(x, float), np.asarray(y, float)], -1) for x, y in zip(df["x"], df["y"])])
    return {"xy": xy, "demand": np.stack([np.asarray(d, np.int64) for d in df["demand"]]),
            "window": np.stack([np.stack([np.asarray(a, float), np.asarray(b, float)], -1)
                                for a, b in zip(df["tw_start"], df["tw_end"])]),
            "capacity": np.array(df["capacity"], np.int64), "open": np.array(df["open"], np.int64),
            "tw": np.array(df["tw"], np.int64)}      # copies: pandas hands out read-only views
