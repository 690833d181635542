"""Training and evaluation loops of the t2mir study (shared by the stages and the calibration)."""
from __future__ import annotations

import numpy as np
import torch

from .env import step_states
from .icl import ICT, encode, loss_fn, sample_batch


def train_model(size, variant, train_goals, *, steps, tasks_per_batch, contexts_per_task, k, lr, seed,
                d, heads, layers, n_token, n_task, top_k, hidden, balance_w, contrast_w, tau, progress=None):
    from stages.common.optim import Adam

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = ICT(size, variant, d, heads, layers, n_token, n_task, top_k, hidden)
    opt = Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        ti = rng.choice(len(train_goals), size=tasks_per_batch, replace=len(train_goals) < tasks_per_batch)
        ti = np.repeat(ti, contexts_per_task)
        b = sample_batch(train_goals[ti], size, k, rng)
        loss, _ = loss_fn(model, encode(b, size), torch.from_numpy(b["y"]), torch.from_numpy(ti),
                          balance_w, contrast_w, tau)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress.update(1)
    return model, losses


@torch.no_grad()
def action_accuracy(model, size, goals, n_per_task, k, rng, shuffle_context=False):
    """Share of queries whose argmax action is optimal; ``shuffle_context`` pairs each query with
    a context drawn from another task (the control: no usable in-context information)."""
    model.eval()
    g = np.repeat(goals, n_per_task, axis=0)
    b = sample_batch(g, size, k, rng)
    if shuffle_context:
        other = all_other(goals, n_per_task, rng)
        ob = sample_batch(other, size, k, rng)
        for key in ("s", "a", "r", "s2"):
            b[key] = ob[key]
    logits, _ = model(encode(b, size))
    return float((logits.argmax(-1).numpy() == b["y"]).mean())


def all_other(goals, n_per_task, rng):
    """For each query row, the goal of a different task."""
    out = []
    for i in range(len(goals)):
        for _ in range(n_per_task):
            j = rng.integers(0, len(goals) - 1)
            out.append(goals[j + (j >= i)])
    return np.array(out)


@torch.no_grad()
def rollout_returns(model, size, goals, episodes_per_task, k, horizon, rng, shuffle_context=False,
                    record=None):
    """Return per episode of the greedy in-context policy: one random-policy context per episode
    (from the episode's task, or from another task with ``shuffle_context``), query = current cell."""
    model.eval()
    g = np.repeat(goals, episodes_per_task, axis=0)
    ctx = sample_batch(all_other(goals, episodes_per_task, rng) if shuffle_context else g, size, k, rng)
    state = rng.integers(0, size, size=(len(g), 2))
    ret = np.zeros(len(g))
    for _ in range(horizon):
        b = dict(ctx, q=state)
        logits, _ = model(encode(b, size))
        state = step_states(state, logits.argmax(-1).numpy(), size)
        if record is not None:
            record.append(state[0].copy())
        ret += (state == g).all(-1)
    return ret, g, state


def random_returns(size, goals, episodes_per_task, horizon, rng):
    g = np.repeat(goals, episodes_per_task, axis=0)
    state = rng.integers(0, size, size=(len(g), 2))
    ret = np.zeros(len(g))
    for _ in range(horizon):
        state = step_states(state, rng.integers(0, 5, size=len(g)), size)
        ret += (state == g).all(-1)
    return ret
