"""DPT-style in-context data on DarkRoom and the tiny transformer with four FFN variants.

A context is ``k`` transitions (s, a, r, s') of a uniform random policy from uniformly drawn
cells of one task (goal); the query is a cell, the label the optimal action there. The model
reads the context tokens and the query token (no causal mask) and predicts the action from the
query token. Its last layer's FFN is one of: ``dense`` (one FFN, hidden width matched to the
MoE's total parameters), ``token`` (token-wise MoE, top-k of E experts, balance loss),
``task`` (task-wise MoE routed on the mean-pooled context, contrastive router loss) or
``t2mir`` (both branches, each writing half the width, outputs concatenated), or ``uniform``
(T2MIR with its routing taken out: the same two expert sets, the same parameters and compute,
every token's and every trajectory's experts mixed with equal weights 1/E, no router and so no
balance or contrastive loss: the control of the T2MIR-vs-dense must).
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .env import N_ACTIONS, optimal_actions, step_states

VARIANTS = ("dense", "token", "task", "t2mir", "uniform")
STUDY_VARIANTS = ("dense", "uniform", "t2mir")      # what the stages train and evaluate


def all_goals(size: int) -> np.ndarray:
    return np.array([(x, y) for x in range(size) for y in range(size)], dtype=np.int64)


def split_tasks(size: int, holdout: float, rng: np.random.Generator):
    """Goals split into train and held-out tasks (a seeded permutation)."""
    goals = all_goals(size)[rng.permutation(size * size)]
    n_test = max(1, int(round(holdout * len(goals))))
    return goals[n_test:], goals[:n_test]


def load_tasks(path, seed: int) -> dict:
    """One seed's tasks from data/t2mir/tasks.npz (keys ``s<seed>/...``) as {"size", "train": (goals,
    pools), "test": (goals, pools)}; a KeyError names a seed the file does not hold."""
    import numpy as np

    z = np.load(path)
    if f"s{seed}/size" not in z.files:
        raise KeyError(f"{path} holds no tasks for seed {seed} (seeds {list(z['seeds'])}): run the prepare stage")
    out = {"size": int(z[f"s{seed}/size"])}
    for name in ("train", "test"):
        out[name] = (z[f"s{seed}/{name}_goals"],
                     {key: z[f"s{seed}/{name}_{key}"] for key in ("s", "a", "r", "s2")})
    return out


def sample_batch(goals: np.ndarray, size: int, k: int, rng: np.random.Generator):
    """One context per row of ``goals``: arrays s (m,k,2), a (m,k), r (m,k), s2 (m,k,2), q (m,2), y (m,)."""
    m = len(goals)
    s = rng.integers(0, size, size=(m, k, 2))
    a = rng.integers(0, N_ACTIONS, size=(m, k))
    s2 = step_states(s.reshape(-1, 2), a.reshape(-1), size).reshape(m, k, 2)
    r = (s2 == goals[:, None, :]).all(-1).astype(np.float32)
    q = rng.integers(0, size, size=(m, 2))
    return {"s": s, "a": a, "r": r, "s2": s2, "q": q, "y": optimal_actions(q, goals)}


def make_pools(goals: np.ndarray, size: int, n: int, rng: np.random.Generator):
    """Each task's offline in-context dataset: ``n`` transitions of a uniform random policy from
    uniformly drawn cells (DPT's random-policy context data). Arrays s (T,n,2), a (T,n), r (T,n), s2 (T,n,2)."""
    b = sample_batch(goals, size, n, rng)
    return {key: b[key] for key in ("s", "a", "r", "s2")}


def sample_from_pools(pools, ti: np.ndarray, goals: np.ndarray, size: int, k: int, rng: np.random.Generator,
                      context_ti: np.ndarray | None = None):
    """One context per row of ``ti``: ``k`` transitions drawn (with replacement) from the pool of task
    ``context_ti`` (default ``ti``; another task for the shuffled-context control), a uniform query
    cell, and the optimal action there for the task ``goals[ti]``."""
    ci = ti if context_ti is None else context_ti
    n = pools["a"].shape[1]
    j = rng.integers(0, n, size=(len(ti), k))
    b = {key: pools[key][ci[:, None], j] for key in ("s", "a", "r", "s2")}
    b["q"] = rng.integers(0, size, size=(len(ti), 2))
    b["y"] = optimal_actions(b["q"], goals[ti])
    return b


def encode(batch, size: int) -> torch.Tensor:
    """Token features (m, k+1, 4*size+N_ACTIONS+2): one-hot cells, one-hot action, reward, query flag."""
    eye = np.eye(size, dtype=np.float32)
    s, a, r, s2, q = batch["s"], batch["a"], batch["r"], batch["s2"], batch["q"]
    m, k = a.shape
    ctx = np.concatenate([eye[s[..., 0]], eye[s[..., 1]], np.eye(N_ACTIONS, dtype=np.float32)[a],
                          r[..., None], eye[s2[..., 0]], eye[s2[..., 1]], np.zeros((m, k, 1), np.float32)], -1)
    qt = np.zeros((m, 1, ctx.shape[-1]), np.float32)
    qt[:, 0, :size] = eye[q[:, 0]]
    qt[:, 0, size:2 * size] = eye[q[:, 1]]
    qt[:, 0, -1] = 1.0
    return torch.from_numpy(np.concatenate([ctx, qt], 1))


def feature_dim(size: int) -> int:
    return 4 * size + N_ACTIONS + 2


class Experts(nn.Module):
    """E two-layer experts evaluated densely and mixed with sparse top-k weights (tiny E: cheap)."""

    def __init__(self, n: int, d_in: int, hidden: int, d_out: int):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(n, d_in, hidden) / d_in ** 0.5)
        self.b1 = nn.Parameter(torch.zeros(n, hidden))
        self.w2 = nn.Parameter(torch.randn(n, hidden, d_out) / hidden ** 0.5)
        self.b2 = nn.Parameter(torch.zeros(n, d_out))

    def forward(self, x, weights):        # x (..., d_in), weights (..., n)
        h = F.gelu(torch.einsum("...i,nih->...nh", x, self.w1) + self.b1)
        y = torch.einsum("...nh,nho->...no", h, self.w2) + self.b2
        return (weights.unsqueeze(-1) * y).sum(-2)


def top_k_weights(logits, k: int):
    """Softmax over the top-k logits, zero elsewhere."""
    val, idx = logits.topk(k, dim=-1)
    return torch.zeros_like(logits).scatter(-1, idx, val.softmax(-1))


def balance_loss(probs, weights):
    """Switch-style load balance: E * sum_i f_i P_i (f: share of routed mass, P: mean router prob); 1 when uniform."""
    e = probs.shape[-1]
    f = (weights > 0).float().reshape(-1, e).mean(0)
    f = f / f.sum()
    return e * (f * probs.reshape(-1, e).mean(0)).sum()


def contrastive_loss(z, task_ids, tau: float):
    """Supervised InfoNCE on normalised router representations: rows of the same task are positives."""
    z = F.normalize(z, dim=-1)
    sim = z @ z.T / tau
    eye = torch.eye(len(z), dtype=torch.bool, device=z.device)
    sim = sim.masked_fill(eye, -1e9)
    pos = (task_ids[:, None] == task_ids[None, :]) & ~eye
    logp = sim.log_softmax(-1)
    has = pos.any(1)
    if not has.any():
        return z.sum() * 0.0
    return -((logp * pos).sum(1)[has] / pos.sum(1)[has]).mean()


class MoEFFN(nn.Module):
    def __init__(self, variant: str, d: int, n_token: int, n_task: int, top_k: int, hidden: int, dense_hidden: int):
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        self.variant, self.top_k = variant, top_k
        out_tok = d // 2 if variant in ("t2mir", "uniform") else d
        if variant == "dense":
            self.ffn = nn.Sequential(nn.Linear(d, dense_hidden), nn.GELU(), nn.Linear(dense_hidden, d))
        if variant in ("token", "t2mir", "uniform"):
            self.tok_gate = nn.Linear(d, n_token)
            self.tok = Experts(n_token, d, hidden, out_tok)
        if variant in ("task", "t2mir", "uniform"):
            self.task_gate = nn.Linear(d, n_task)
            self.task_proj = nn.Linear(d, d)
            self.task = Experts(n_task, d, hidden, d - out_tok if variant in ("t2mir", "uniform") else d)

    def forward(self, x):
        aux = {}
        if self.variant == "dense":
            return self.ffn(x), aux
        outs = []
        if self.variant == "uniform":       # routing taken out: equal weights, no router, no router loss
            n_tok, n_task = self.tok.w1.shape[0], self.task.w1.shape[0]
            w_tok = x.new_full((*x.shape[:-1], n_tok), 1.0 / n_tok)
            w_task = x.new_full((*x.shape[:-1], n_task), 1.0 / n_task)
            return torch.cat([self.tok(x, w_tok), self.task(x, w_task)], -1), aux
        if self.variant in ("token", "t2mir"):
            logits = self.tok_gate(x)
            w = top_k_weights(logits, self.top_k)
            aux["balance"] = balance_loss(logits.softmax(-1), w)
            outs.append(self.tok(x, w))
        if self.variant in ("task", "t2mir"):
            z = self.task_proj(x[:, :-1].mean(1))          # trajectory-level: the pooled context
            w = top_k_weights(self.task_gate(z), self.top_k)
            aux["router_z"] = z
            outs.append(self.task(x, w[:, None, :].expand(-1, x.shape[1], -1)))
        return torch.cat(outs, -1), aux


class Block(nn.Module):
    def __init__(self, d: int, heads: int, ffn: nn.Module):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ffn = ffn

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        y, aux = self.ffn(self.ln2(x)) if isinstance(self.ffn, MoEFFN) else (self.ffn(self.ln2(x)), {})
        return x + y, aux


def moe_params(d: int, n_token: int, n_task: int, hidden: int, variant: str) -> int:
    """Parameter count of one MoE FFN of ``variant`` (used to match the dense width)."""
    m = MoEFFN(variant, d, n_token, n_task, 2, hidden, 4)
    return sum(p.numel() for p in m.parameters())


class ICT(nn.Module):
    """In-context transformer: ``layers`` blocks, the last with the variant's FFN, the others dense."""

    def __init__(self, size: int, variant: str, d: int = 32, heads: int = 4, layers: int = 2,
                 n_token: int = 6, n_task: int = 12, top_k: int = 2, hidden: int = 32):
        super().__init__()
        dense_hidden = max(4, round((moe_params(d, n_token, n_task, hidden, "t2mir") - d) / (2 * d + 1)))
        self.embed = nn.Linear(feature_dim(size), d)
        blocks = [Block(d, heads, nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d)))
                  for _ in range(layers - 1)]
        blocks.append(Block(d, heads, MoEFFN(variant, d, n_token, n_task, top_k, hidden, dense_hidden)))
        self.blocks = nn.ModuleList(blocks)
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, N_ACTIONS)

    def forward(self, tokens):
        x = self.embed(tokens)
        aux = {}
        for b in self.blocks:
            x, a = b(x)
            aux.update(a)
        return self.head(self.ln(x[:, -1])), aux


def loss_fn(model, tokens, y, task_ids, balance_w: float, contrast_w: float, tau: float):
    logits, aux = model(tokens)
    loss = F.cross_entropy(logits, y)
    if "balance" in aux:
        loss = loss + balance_w * aux["balance"]
    if "router_z" in aux:
        loss = loss + contrast_w * contrastive_loss(aux["router_z"], task_ids, tau)
    return loss, logits


MODEL_KEYS = ("d", "heads", "layers", "n_token", "n_task", "top_k", "hidden")


def load_model(weights, config, variant: str | None = None) -> tuple[ICT, dict]:
    """A trained model from its state dict (``torch.load(weights_only=True)``) and config.json
    (``{"size", "k", "variant", "d", ...}``; ``variant`` overrides the config's). Returns (model, config)."""
    import json
    from pathlib import Path

    cfg = json.loads(Path(config).read_text())
    v = variant or cfg["variant"]
    model = ICT(cfg["size"], v, **{key: cfg[key] for key in MODEL_KEYS})
    model.load_state_dict(torch.load(weights, weights_only=True))
    model.eval()
    return model, dict(cfg, variant=v)


def context_columns(k: int) -> list[str]:
    """The pyfunc model's input columns: ``k`` transitions (s, a, r, s') then the query cell,
    ``t{i}_`` naming transition i (so no two names meet at any ``k``: ``s2{i}`` once met ``s{21}``)."""
    cols = []
    for i in range(k):
        cols += [f"t{i}_s_x", f"t{i}_s_y", f"t{i}_a", f"t{i}_r", f"t{i}_s2_x", f"t{i}_s2_y"]
    return cols + ["q_x", "q_y"]


def batch_to_rows(batch) -> np.ndarray:
    """A batch (``sample_from_pools``'s dict) as rows of ``context_columns(k)``."""
    s, a, r, s2, q = batch["s"], batch["a"], batch["r"], batch["s2"], batch["q"]
    per = np.concatenate([s, a[..., None], r[..., None], s2], -1).astype(np.float64)   # (m, k, 6)
    return np.concatenate([per.reshape(len(a), -1), q.astype(np.float64)], 1)


def example_rows(tasks: dict, k: int, seed: int, n: int = 3):
    """The pyfunc model's input example: one context of each of the first ``n`` held-out tasks of
    ``tasks`` (``load_tasks``'s dict), drawn from the task's own pool as the evaluation draws them
    (``sample_from_pools``, a generator of ``seed``), as a DataFrame of ``context_columns(k)``
    (float64)."""
    import pandas as pd

    goals, pools = tasks["test"]
    ti = np.arange(min(n, len(goals)))
    b = sample_from_pools(pools, ti, goals, tasks["size"], k, np.random.default_rng([seed, 9]))
    return pd.DataFrame(batch_to_rows(b), columns=context_columns(k))


def rows_to_batch(rows: np.ndarray, k: int) -> dict:
    """Inverse of ``batch_to_rows``."""
    per = rows[:, :6 * k].reshape(len(rows), k, 6)
    ints = np.rint(per).astype(np.int64)
    return {"s": ints[..., 0:2], "a": ints[..., 2], "r": per[..., 3].astype(np.float32), "s2": ints[..., 4:6],
            "q": np.rint(rows[:, 6 * k:]).astype(np.int64)}
