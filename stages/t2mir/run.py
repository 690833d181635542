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


# ---- one verdict seed, as the stages (and the calibration) run it ----------------------------------

def prepare_seed(size: int, holdout: float, pool: int, seed: int) -> dict:
    """The seed's task split and offline in-context datasets: {"size", "train_goals", "test_goals",
    "train_s", ..., "test_s2"} (the seed drives the split and the pools: generator [seed, 0])."""
    from .icl import make_pools, split_tasks

    rng = np.random.default_rng([seed, 0])
    train_goals, test_goals = split_tasks(size, holdout, rng)
    arrays = {"size": np.array(size), "train_goals": train_goals, "test_goals": test_goals}
    for name, goals in (("train", train_goals), ("test", test_goals)):
        pools = make_pools(goals, size, pool, rng)
        arrays.update({f"{name}_{key}": v for key, v in pools.items()})
    return arrays


def tasks_of(arrays: dict) -> dict:
    """``prepare_seed``'s arrays as {"size", "train": (goals, pools), "test": (goals, pools)}."""
    out = {"size": int(arrays["size"])}
    for name in ("train", "test"):
        out[name] = (arrays[f"{name}_goals"], {key: arrays[f"{name}_{key}"] for key in ("s", "a", "r", "s2")})
    return out


def train_seed(tasks: dict, cfg: dict, seed: int, variants, progress=None, device="cpu"):
    """Every variant of ``variants`` trained on the seed's training tasks with the same seed (same
    initialisation where the modules agree, same batches): ({variant: model}, {variant: losses})."""
    size, (goals, pools) = tasks["size"], tasks["train"]
    models, curves = {}, {}
    for v in variants:
        models[v], curves[v] = train_model(size, v, goals, pools, seed=seed, progress=progress, device=device, **cfg)
    return models, curves


def evaluate_seed(models: dict, tasks: dict, k: int, queries_per_task: int, episodes_per_task: int,
                  horizon: int, seed: int, train_queries_per_task: int | None = None) -> tuple[dict, dict]:
    """The seed's figures on its held-out tasks (every variant on the same contexts, queries and
    start cells: generators [seed, 1, i]), and the per-episode returns ({variant: array}).
    Per variant: held-out / shuffled-context / training-task accuracy and return; for T2MIR and
    the routing-free control, the paired return difference to dense (``<v>_minus_dense``)."""
    from stages.common.stats import t_interval

    size = tasks["size"]
    (tr_goals, tr_pools), (te_goals, te_pools) = tasks["train"], tasks["test"]

    def gen(i):
        return np.random.default_rng([seed, 1, i])

    metrics: dict = {}
    returns = {}
    starts = ti = None
    for v, m in models.items():
        r, ti, starts = rollout_returns(m, size, te_goals, te_pools, episodes_per_task, k, horizon, gen(3))
        r_sh, *_ = rollout_returns(m, size, te_goals, te_pools, episodes_per_task, k, horizon, gen(4),
                                   shuffle_context=True)
        returns[v] = r
        acc = action_accuracy(m, size, te_goals, te_pools, queries_per_task, k, gen(0))
        acc_sh = action_accuracy(m, size, te_goals, te_pools, queries_per_task, k, gen(1), shuffle_context=True)
        ci = t_interval(r, 0.95)
        metrics[v] = {"heldout_accuracy": acc, "shuffled_accuracy": acc_sh,
                      "train_accuracy": action_accuracy(m, size, tr_goals, tr_pools,
                                                        train_queries_per_task or queries_per_task, k, gen(2)),
                      "icl_accuracy_gain": acc - acc_sh,
                      "heldout_return": ci["mean"], "heldout_return_low": ci["low"], "heldout_return_high": ci["high"],
                      "shuffled_return": float(r_sh.mean()), "icl_return_gain": float(r.mean() - r_sh.mean())}
    metrics["random_return"] = float(random_returns(size, te_goals, episodes_per_task, horizon, gen(5)).mean())
    metrics["oracle_return"] = float(oracle_returns(te_goals, starts, ti, horizon).mean())
    if "dense" in returns:
        for v in returns:
            if v == "dense":
                continue
            d = returns[v] - returns["dense"]
            ci = t_interval(d, 0.95) if d.std() > 0 else {"low": float(d.mean()), "high": float(d.mean())}
            metrics[f"{v}_minus_dense"] = {
                "return": float(d.mean()), "return_low": ci["low"], "return_high": ci["high"],
                "accuracy": metrics[v]["heldout_accuracy"] - metrics["dense"]["heldout_accuracy"]}
    metrics["goal_overlap"] = len({tuple(g) for g in tr_goals} & {tuple(g) for g in te_goals})
    metrics["n_test_tasks"], metrics["n_train_tasks"] = len(te_goals), len(tr_goals)
    return metrics, returns
