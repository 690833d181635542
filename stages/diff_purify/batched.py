"""diff_purify's networks trained as batched models: several classifiers or score networks (one
per seed, and per kind for the score networks) in one model with a leading model dimension
(stages.common.seeds.stack_modules / call_stacked), each the same bit for bit as core.train_classifier
/ core.train_score give it alone: each model is built under its own seed, draws its batches and noise
from its own generator in the same order, and gets the gradient of its own loss (the sum of the
models' mean losses; Adam is elementwise). tests/diff_purify/test_core.py checks it; the train stage
uses it, benchmarks/diff_purify/seeds.py measures it against one network after another.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from tqdm import tqdm

from .core import D_IN, Classifier, ScoreNet


def _unstack(make, params: dict, i: int):
    """The i-th model of a stacked set (stages.common.seeds.stack_modules), as a plain module in eval mode."""
    model = make()
    model.load_state_dict({k: v[i].detach().clone() for k, v in params.items()})
    return model.eval()


def train_classifiers(xs: list, ys: list, hidden: int, steps: int, lr: float, batch: int, seeds: list[int]):
    """``train_classifier`` for several models at once, one per (data, seed), as one batched model
    (a leading model dimension, stages.common.seeds.stack_modules / call_stacked): each model is
    built under its own seed, draws its batches from its own generator in the same order, and gets
    the gradient of its own loss (the sum of the models' mean losses), so each is the model
    ``train_classifier`` gives alone (tests/diff_purify/test_core.py). Returns (models, losses)."""
    from stages.common.seeds import call_stacked, stack_modules

    params, buffers, base = stack_modules(lambda: Classifier(hidden), seeds)
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    xts, yts = [torch.as_tensor(x) for x in xs], [torch.as_tensor(y) for y in ys]
    opt = torch.optim.Adam(params.values(), lr=lr)
    losses = [[] for _ in seeds]
    for _ in range(steps):
        idx = [torch.randint(0, len(x), (batch,), generator=g) for x, g in zip(xts, gens)]
        logits = call_stacked(base, params, buffers, torch.stack([x[i] for x, i in zip(xts, idx)]))
        per = torch.stack([F.cross_entropy(logits[k], y[i]) for k, (y, i) in enumerate(zip(yts, idx))])
        opt.zero_grad()
        per.sum().backward()
        opt.step()
        for k, v in enumerate(per.tolist()):
            losses[k].append(v)
    return [_unstack(lambda: Classifier(hidden), params, k) for k in range(len(seeds))], losses


def train_scores(datas: list, hidden: int, steps: int, lr: float, batch: int, sigmas: list, seeds: list[int]):
    """``train_score`` for several models at once, one per (data, (sigma_min, sigma_max), seed), as one
    batched model (as ``train_classifiers``): each is the model ``train_score`` gives alone.
    Returns (models, losses)."""
    from stages.common.seeds import call_stacked, stack_modules

    for lo, hi in sigmas:
        if not 0 < lo <= hi:
            raise ValueError(f"train_scores: need 0 < sigma_min <= sigma_max, got {lo}, {hi}")
    params, buffers, base = stack_modules(lambda: ScoreNet(hidden), seeds)
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    xts = [torch.as_tensor(d) for d in datas]
    logs = [(math.log(lo), math.log(hi)) for lo, hi in sigmas]
    opt = torch.optim.Adam(params.values(), lr=lr)
    losses = [[] for _ in seeds]
    for _ in tqdm(range(steps), desc=f"score networks ({len(seeds)} at once)", mininterval=5):
        xb, sb, nb = [], [], []
        for x, g, (lo, hi) in zip(xts, gens, logs):          # train_score's draws, in its order
            idx = torch.randint(0, len(x), (batch,), generator=g)
            sig = torch.exp(lo + (hi - lo) * torch.rand(batch, generator=g))
            n = torch.randn(batch, D_IN, generator=g)
            xb.append(x[idx] + sig[:, None] * n)
            sb.append(sig)
            nb.append(n)
        noise = torch.stack(nb)
        per = ((call_stacked(base, params, buffers, torch.stack(xb), torch.stack(sb)) - noise) ** 2).mean(dim=(1, 2))
        opt.zero_grad()
        per.sum().backward()
        opt.step()
        for k, v in enumerate(per.tolist()):
            losses[k].append(v)
    return [_unstack(lambda: ScoreNet(hidden), params, k) for k in range(len(seeds))], losses
