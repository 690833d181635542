"""The non-convex part: a small MLP on scikit-learn's digits, trained stage by stage with RERM
biased toward the previous stage's weights, many replications and seeds at once.

Tasks (:func:`make_digit_tasks`): images of ``sklearn.datasets.load_digits`` (8x8, scaled to
[0, 1]); the target task is *noisy* digits, x + noise * z with z ~ N(0, I) per image. Per
replication the images are split into a test set (target-task noise) and three disjoint training
stages of ``per_stage`` images. Arms, all sharing the replication's images, noise draws and
initial weights:

* ``good``: clean -> half noise -> full noise (the easy-to-hard curriculum);
* ``violating``: the same images and noise levels, but stages 1 and 2 carry labels permuted by
  a random permutation of the ten classes (their optima are unrelated to the target's: the
  curriculum without the paper's condition, the control);
* ``reversed``: the good curriculum's early stages in reverse order (half noise -> clean -> full
  noise): the same images, labels and steps, a larger jump into the target task;
* ``direct``: only stage 3 (the same ``per_stage`` full-noise images as the curricula's last
  stage): equal target data;
* ``direct_long``: ``direct`` trained for as many optimiser steps as the whole curriculum (the
  curriculum's advantage is not just more optimisation);
* ``direct_total``: all 3 x ``per_stage`` images at full noise, one stage: equal total data, all
  target;
* ``pooled``: the good curriculum's 3 x ``per_stage`` images at their own noise levels in one
  stage, uniform weights (the curriculum's data without the curriculum).

The one-stage arms on 3 x ``per_stage`` images (``direct_total``, ``pooled``) run ``steps``
full-batch steps: as many per-image gradient evaluations as the curriculum's 3 stages of
``steps`` on ``per_stage`` images (equal compute).

Training (:func:`train_stage`): each stage minimises mean cross-entropy + (lam / 2) ||theta -
theta_prev||^2 from theta_prev (theta_0 = 0 in the penalty, i.e. plain weight decay on the first
stage), by full-batch Adam for a fixed number of steps. The models of every replication, seed and
arm are one batched network (weights of shape (models, in, out), ``torch.bmm``), so the seeds run
together; every model's gradient and Adam step are its own, so a seed's figures do not depend on
the seeds batched beside it (tests/curriculum_rerm/test_seeds.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ARMS = ("good", "violating", "reversed", "direct", "direct_long", "direct_total", "pooled")


@dataclass
class DigitTasks:
    """Per-arm stage data for S replications: stages[arm] = [(X (S, m, 64), y (S, m)), ...]."""

    stages: dict
    X_test: np.ndarray       # (S, n_test, 64)
    y_test: np.ndarray       # (S, n_test)

    @classmethod
    def concat(cls, parts: list["DigitTasks"]) -> "DigitTasks":
        """Several seeds' tasks stacked along the replications axis (in the order given)."""
        stages = {a: [(np.concatenate([t.stages[a][k][0] for t in parts]),
                       np.concatenate([t.stages[a][k][1] for t in parts]))
                      for k in range(len(parts[0].stages[a]))] for a in parts[0].stages}
        return cls(stages=stages, X_test=np.concatenate([t.X_test for t in parts]),
                   y_test=np.concatenate([t.y_test for t in parts]))


def arm_steps(arm: str, steps: int, n_stages: int) -> int:
    """Full-batch steps of each of ``arm``'s stages."""
    return steps * n_stages if arm == "direct_long" else steps


def load_images() -> tuple[np.ndarray, np.ndarray]:
    """sklearn's digits (1797 images; shipped with scikit-learn, no download), pixels in [0, 1]."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.data / 16.0).astype(np.float32), d.target.astype(np.int64)


def make_digit_tasks(images: np.ndarray, labels: np.ndarray, rng: np.random.Generator, reps: int,
                     per_stage: int, n_test: int, noise: float, levels: list[float]) -> DigitTasks:
    """The arms of the module docstring for ``reps`` replications drawn from ``rng``; ``levels``
    are the curriculum's noise fractions per stage (the last must be 1: the target task)."""
    N, D = images.shape
    n_st = len(levels)
    if n_test + n_st * per_stage > N:
        raise ValueError(f"make_digit_tasks: {n_test} test + {n_st} x {per_stage} training images "
                         f"exceed the {N} digits")
    stages = {a: [] for a in ARMS}
    Xt, yt = [], []
    per_rep = []
    for _ in range(reps):
        perm = rng.permutation(N)
        z = rng.standard_normal((N, D)).astype(np.float32)
        test = perm[:n_test]
        Xt.append(images[test] + noise * z[test])
        yt.append(labels[test])
        idx = [perm[n_test + k * per_stage: n_test + (k + 1) * per_stage] for k in range(n_st)]
        label_perms = [rng.permutation(10) for _ in range(n_st - 1)]
        per_rep.append((idx, z, label_perms))
    for k, lev in enumerate(levels):
        gx, gy, vy = [], [], []
        for idx, z, lp in per_rep:
            i = idx[k]
            gx.append(images[i] + lev * noise * z[i])
            gy.append(labels[i])
            vy.append(labels[i] if k == n_st - 1 else lp[k][labels[i]])
        stages["good"].append((np.stack(gx), np.stack(gy)))
        stages["violating"].append((np.stack(gx), np.stack(vy)))
    stages["reversed"] = [*stages["good"][-2::-1], stages["good"][-1]]
    stages["direct"] = [stages["good"][-1]]
    stages["direct_long"] = [stages["good"][-1]]
    stages["pooled"] = [(np.concatenate([x for x, _ in stages["good"]], axis=1),
                         np.concatenate([y for _, y in stages["good"]], axis=1))]
    allx = [np.concatenate([images[i] + noise * z[i] for i in idx]) for idx, z, _ in per_rep]
    ally = [np.concatenate([labels[i] for i in idx]) for idx, _, _ in per_rep]
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


def train_stage(params: list, anchor: list, X, y, lam: float, lr: float, steps: int, tick=None) -> list:
    """Minimise mean CE + (lam/2)||theta - anchor||^2 per model from ``params`` by full-batch Adam.
    The models' losses are summed: their parameters are disjoint, so each model's gradient (and
    Adam's per-coordinate step) is its own. ``tick(k)`` (if given) is told every 25 steps done."""
    import torch

    ps = [p.clone().requires_grad_(True) for p in params]
    opt = torch.optim.Adam(ps, lr=lr)
    B, m, _ = X.shape
    for k in range(steps):
        opt.zero_grad()
        logits = forward(ps, X)
        ce = torch.nn.functional.cross_entropy(logits.reshape(B * m, -1), y.reshape(-1), reduction="sum") / m
        reg = sum(((p - a) ** 2).sum() for p, a in zip(ps, anchor))
        (ce + 0.5 * lam * reg).backward()
        opt.step()
        if tick is not None and ((k + 1) % 25 == 0 or k + 1 == steps):
            tick(25 if (k + 1) % 25 == 0 else (k + 1) % 25)
    return [p.detach() for p in ps]


def error_rate(params: list, X, y) -> np.ndarray:
    """Per-model misclassification rate on its own test set."""
    import torch

    with torch.no_grad():
        pred = forward(params, X).argmax(dim=-1)
    return (pred != y).float().mean(dim=1).numpy()


def total_steps(tasks: DigitTasks, steps: int, arms=ARMS) -> int:
    """Full-batch steps :func:`train_arms` takes over ``arms`` (for a progress bar)."""
    n = len(tasks.stages["good"])
    return sum(arm_steps(a, steps, n) * len(tasks.stages[a]) for a in arms)


def train_arms(tasks: DigitTasks, init: list, lam: float, lr: float, steps: int, arms=ARMS,
               tick=None) -> dict[str, np.ndarray]:
    """Test error (S,) of every arm in ``arms``; every arm of a replication starts from its initial
    weights ``init`` (:func:`init_params`, one row per replication). ``direct_long`` runs ``steps``
    x (number of curriculum stages) steps on its one stage."""
    import torch

    Xt, yt = torch.from_numpy(tasks.X_test), torch.from_numpy(tasks.y_test)
    n_stages = len(tasks.stages["good"])
    out = {}
    for arm in arms:
        params = [p.clone() for p in init]
        anchor = [torch.zeros_like(p) for p in init]
        for X, y in tasks.stages[arm]:
            params = train_stage(params, anchor, torch.from_numpy(X), torch.from_numpy(y), lam, lr,
                                 arm_steps(arm, steps, n_stages), tick)
            anchor = params
        out[arm] = error_rate(params, Xt, yt)
    return out
