"""The non-convex part: a small MLP on scikit-learn's digits, trained stage by stage with RERM
biased toward the previous stage's weights, many seeds at once.

Tasks (:func:`make_digit_tasks`): images of ``sklearn.datasets.load_digits`` (8x8, scaled to
[0, 1]); the target task is *noisy* digits, x + noise * z with z ~ N(0, I) per image. Per seed the
images are split into a test set (target-task noise) and three disjoint training stages of
``per_stage`` images. Arms, all sharing the seed's images, noise draws and initial weights:

* ``good``: clean -> half noise -> full noise (the easy-to-hard curriculum);
* ``violating``: the same images and noise levels, but stages 1 and 2 carry labels permuted by
  a random permutation of the ten classes (their optima are unrelated to the target's);
* ``direct``: only stage 3 (the same ``per_stage`` full-noise images as the curricula's last
  stage): equal target data;
* ``direct_total``: all 3 x ``per_stage`` images at full noise: equal total data, all target;
* ``direct_long``: ``direct`` trained for as many optimiser steps as the whole curriculum (a
  control: the curriculum's advantage is not just more optimisation).

Training (:func:`train_stages`): each stage minimises mean cross-entropy + (lam / 2) ||theta -
theta_prev||^2 from theta_prev (theta_0 = 0 in the penalty, i.e. plain weight decay on the first
stage), by full-batch Adam for a fixed number of steps. The models of every seed and arm are one
batched network (weights of shape (models, in, out), ``torch.bmm``), so the seeds run together.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ARMS = ("good", "violating", "direct", "direct_total", "direct_long")


@dataclass
class DigitTasks:
    """Per-arm stage data for S seeds: stages[arm] = [(X (S, m, 64), y (S, m)), ...]."""

    stages: dict
    X_test: np.ndarray       # (S, n_test, 64)
    y_test: np.ndarray       # (S, n_test)


def load_images() -> tuple[np.ndarray, np.ndarray]:
    """sklearn's digits (1797 images; shipped with scikit-learn, no download), pixels in [0, 1]."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.data / 16.0).astype(np.float32), d.target.astype(np.int64)


def make_digit_tasks(images: np.ndarray, labels: np.ndarray, rng: np.random.Generator, seeds: int,
                     per_stage: int, n_test: int, noise: float, levels: list[float]) -> DigitTasks:
    """The arms of the module docstring; ``levels`` are the curriculum's noise fractions per stage
    (the last must be 1: the target task)."""
    N, D = images.shape
    n_st = len(levels)
    if n_test + n_st * per_stage > N:
        raise ValueError(f"make_digit_tasks: {n_test} test + {n_st} x {per_stage} training images "
                         f"exceed the {N} digits")
    stages = {a: [] for a in ARMS}
    Xt, yt = [], []
    per_seed = []
    for _ in range(seeds):
        perm = rng.permutation(N)
        z = rng.standard_normal((N, D)).astype(np.float32)
        test = perm[:n_test]
        Xt.append(images[test] + noise * z[test])
        yt.append(labels[test])
        idx = [perm[n_test + k * per_stage: n_test + (k + 1) * per_stage] for k in range(n_st)]
        label_perms = [rng.permutation(10) for _ in range(n_st - 1)]
        per_seed.append((idx, z, label_perms))
    for k, lev in enumerate(levels):
        gx, gy, vy = [], [], []
        for idx, z, lp in per_seed:
            i = idx[k]
            gx.append(images[i] + lev * noise * z[i])
            gy.append(labels[i])
            vy.append(labels[i] if k == n_st - 1 else lp[k][labels[i]])
        stages["good"].append((np.stack(gx), np.stack(gy)))
        stages["violating"].append((np.stack(gx), np.stack(vy)))
    stages["direct"] = [stages["good"][-1]]
    stages["direct_long"] = [stages["good"][-1]]
    allx = [np.concatenate([images[i] + noise * z[i] for i in idx]) for idx, z, _ in per_seed]
    ally = [np.concatenate([labels[i] for i in idx]) for idx, _, _ in per_seed]
    stages["direct_total"] = [(np.stack(allx), np.stack(ally))]
    return DigitTasks(stages=stages, X_test=np.stack(Xt), y_test=np.stack(yt))


def init_params(B: int, sizes: list[int], gen) -> list:
    """Weights of B MLPs (PyTorch's default Linear init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)))."""
    import torch

    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / np.sqrt(a)
        params.append((torch.rand(B, a, b, generator=gen) * 2 - 1) * bound)
        params.append((torch.rand(B, 1, b, generator=gen) * 2 - 1) * bound)
    return params


def forward(params: list, X):
    """Logits of B MLPs on their own inputs X (B, m, in): ReLU between layers."""
    import torch

    h = X
    for k in range(0, len(params), 2):
        h = torch.baddbmm(params[k + 1], h, params[k])
        if k + 2 < len(params):
            h = torch.relu(h)
    return h


def train_stage(params: list, anchor: list, X, y, lam: float, lr: float, steps: int) -> list:
    """Minimise mean CE + (lam/2)||theta - anchor||^2 per model from ``params`` by full-batch Adam.
    The models' losses are summed: their parameters are disjoint, so each model's gradient (and
    Adam's per-coordinate step) is its own."""
    import torch

    ps = [p.clone().requires_grad_(True) for p in params]
    opt = torch.optim.Adam(ps, lr=lr)
    B, m, _ = X.shape
    for _ in range(steps):
        opt.zero_grad()
        logits = forward(ps, X)
        ce = torch.nn.functional.cross_entropy(logits.reshape(B * m, -1), y.reshape(-1), reduction="sum") / m
        reg = sum(((p - a) ** 2).sum() for p, a in zip(ps, anchor))
        (ce + 0.5 * lam * reg).backward()
        opt.step()
    return [p.detach() for p in ps]


def error_rate(params: list, X, y) -> np.ndarray:
    """Per-model misclassification rate on its own test set."""
    import torch

    with torch.no_grad():
        pred = forward(params, X).argmax(dim=-1)
    return (pred != y).float().mean(dim=1).numpy()


def train_arms(tasks: DigitTasks, hidden: list[int], lam: float, lr: float, steps: int, torch_seed: int,
               progress=None) -> dict[str, np.ndarray]:
    """Test error (S,) of every arm; every arm of a seed starts from the same initial weights.
    ``direct_long`` runs ``steps`` x (number of curriculum stages) steps on its one stage."""
    import torch

    S = tasks.X_test.shape[0]
    sizes = [tasks.X_test.shape[2], *hidden, 10]
    gen = torch.Generator().manual_seed(torch_seed)
    init = init_params(S, sizes, gen)
    Xt, yt = torch.from_numpy(tasks.X_test), torch.from_numpy(tasks.y_test)
    out = {}
    for arm in ARMS:
        params = [p.clone() for p in init]
        anchor = [torch.zeros_like(p) for p in init]
        for X, y in tasks.stages[arm]:
            n_steps = steps * len(tasks.stages["good"]) if arm == "direct_long" else steps
            params = train_stage(params, anchor, torch.from_numpy(X), torch.from_numpy(y), lam, lr, n_steps)
            anchor = params
            if progress is not None:
                progress.update(1)
        out[arm] = error_rate(params, Xt, yt)
    return out
