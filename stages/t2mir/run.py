"""Training and evaluation loops of the t2mir study (shared by the stages and the calibration).

Tasks are goal cells; each task has a pool of random-policy transitions (its offline in-context
dataset, ``icl.make_pools``). Training draws contexts from the training tasks' pools; evaluation
draws them from the held-out tasks' pools, or, for the shuffled-context control, from another
task's pool (the context then says nothing about the queried task).
"""
from __future__ import annotations

import numpy as np
import torch

from .env import step_states
from .icl import ICT, encode, loss_fn, sample_from_pools


def train_model(size, variant, goals, pools, *, steps, tasks_per_batch, contexts_per_task, k, lr, seed,
                d, heads, layers, n_token, n_task, top_k, hidden, balance_w, contrast_w, tau, progress=None,
                device="cpu"):
    """The variant's in-context transformer trained by cross-entropy on the optimal action (plus the
    balance loss of the token-wise router and the contrastive loss of the task-wise router).
    Data are drawn on the CPU (numpy) and moved to ``device``. Returns (model on the CPU, per-step losses)."""
    from stages.common.optim import Adam

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = ICT(size, variant, d, heads, layers, n_token, n_task, top_k, hidden).to(device)
    opt = Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        ti = rng.choice(len(goals), size=tasks_per_batch, replace=len(goals) < tasks_per_batch)
        ti = np.repeat(ti, contexts_per_task)
        b = sample_from_pools(pools, ti, goals, size, k, rng)
        loss, _ = loss_fn(model, encode(b, size).to(device), torch.from_numpy(b["y"]).to(device),
                          torch.from_numpy(ti).to(device), balance_w, contrast_w, tau)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress.update(1)
    model.eval()
    return model.cpu(), losses


def other_tasks(ti: np.ndarray, n_tasks: int, rng) -> np.ndarray:
    """For each task index of ``ti``, a different task index drawn uniformly."""
    if n_tasks < 2:
        raise ValueError("the shuffled-context control needs at least 2 tasks")
    j = rng.integers(0, n_tasks - 1, size=len(ti))
    return j + (j >= ti)


@torch.no_grad()
def action_accuracy(model, size, goals, pools, n_per_task, k, rng, shuffle_context=False) -> float:
    """Share of uniform query cells whose argmax action is optimal for the task; ``shuffle_context``
    pairs each query with a context from another task's pool (the control)."""
    model.eval()
    ti = np.repeat(np.arange(len(goals)), n_per_task)
    cti = other_tasks(ti, len(goals), rng) if shuffle_context else None
    b = sample_from_pools(pools, ti, goals, size, k, rng, context_ti=cti)
    logits, _ = model(encode(b, size))
    return float((logits.argmax(-1).numpy() == b["y"]).mean())


@torch.no_grad()
def rollout_returns(model, size, goals, pools, episodes_per_task, k, horizon, rng, shuffle_context=False,
                    record=None, context=None, starts=None):
    """Return per episode of the greedy in-context policy, all episodes batched (one forward per
    step): one context per episode from its task's pool (another task's with ``shuffle_context``),
    query = the current cell, reward 1 per step on the goal. ``record`` (a list) gets episode 0's
    cells; ``context`` / ``starts`` replace the drawn contexts / start cells (a replay).
    Returns (returns, task index per episode, start cells)."""
    model.eval()
    ti = np.repeat(np.arange(len(goals)), episodes_per_task)
    cti = other_tasks(ti, len(goals), rng) if shuffle_context else None
    ctx = sample_from_pools(pools, ti, goals, size, k, rng, context_ti=cti) if context is None else context
    g = goals[ti]
    start = rng.integers(0, size, size=(len(ti), 2)) if starts is None else np.asarray(starts)
    state = start.copy()
    ret = np.zeros(len(ti))
    if record is not None:
        record.append(state[0].copy())
    for _ in range(horizon):
        logits, _ = model(encode(dict(ctx, q=state), size))
        state = step_states(state, logits.argmax(-1).numpy(), size)
        if record is not None:
            record.append(state[0].copy())
        ret += (state == g).all(-1)
    return ret, ti, start


def random_returns(size, goals, episodes_per_task, horizon, rng):
    """Return per episode of the uniform random policy (the floor)."""
    g = np.repeat(goals, episodes_per_task, axis=0)
    state = rng.integers(0, size, size=(len(g), 2))
    ret = np.zeros(len(g))
    for _ in range(horizon):
        state = step_states(state, rng.integers(0, 5, size=len(g)), size)
        ret += (state == g).all(-1)
    return ret


def oracle_returns(goals, starts, ti, horizon):
    """Return per episode of the optimal policy from the same starts (the ceiling)."""
    d = np.abs(goals[ti] - starts).sum(1)
    return np.where(d == 0, horizon, np.maximum(0, horizon - d + 1)).astype(float)
