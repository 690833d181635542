"""Imitation learners on labyrinth mazes: behaviour cloning from the exact (BFS) expert's
demonstrations, and DAgger (Ross, Gordon & Bagnell 2011) with the same expert relabelling the
states the learner visits. Our own torch code: the ``imitation`` library (1.0.1) does not install
beside the repository's pins (README: labyrinth, Deviations).

The expert is deterministic: at every state it takes the first optimal action (lowest index among
the actions that lower the exact distance to the goal by one); its label is that action, and the
loss the cross-entropy against it. ``Task.optimal`` gives the whole optimal set (for measuring).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .maze import N_CHANNELS, Maze, encode, optimal_actions, solve, static_planes, transition

LEARNERS = ("bc", "dagger", "bc_partial", "bc_key_door", "bc_ice")


@dataclass
class Task:
    """A maze with what rollouts need precomputed: the exact distances and the static planes."""
    maze: Maze
    dist: np.ndarray
    static: np.ndarray

    @classmethod
    def of(cls, maze: Maze) -> "Task":
        return cls(maze, solve(maze), static_planes(maze))

    def optimal(self, cell, has_key) -> list[int]:
        """Every optimal action at (cell, has_key)."""
        return optimal_actions(self.maze, self.dist, cell, has_key)

    def label(self, cell, has_key) -> np.ndarray:
        """The expert's action at (cell, has_key), one-hot (all zeros where the goal is unreachable)."""
        acts = self.optimal(cell, has_key)
        y = np.zeros(4, dtype=np.float32)
        if acts:
            y[acts[0]] = 1.0
        return y


def policy_net(n: int, width: int = 32, hidden: int = 128):
    """Two 3x3 convolutions then a two-layer head on the flattened grid: it sees the whole maze."""
    import torch.nn as nn

    return nn.Sequential(
        nn.Conv2d(N_CHANNELS, width, 3, padding=1), nn.ReLU(),
        nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
        nn.Flatten(), nn.Linear(width * n * n, hidden), nn.ReLU(), nn.Linear(hidden, 4))


def expert_demos(tasks: list[Task], view_radius: int | None):
    """States and labels along one optimal trajectory per maze (the first optimal action each step)."""
    xs, ys = [], []
    for t in tasks:
        cell, k = t.maze.start, 0
        for _ in range(4 * t.maze.n ** 2):
            y = t.label(cell, k)
            if y.sum() == 0:
                break
            xs.append(encode(t.maze, cell, k, view_radius, t.static))
            ys.append(y)
            cell, k, outcome = transition(t.maze, cell, k, int(np.flatnonzero(y)[0]))
            if outcome is not None:
                break
    return np.stack(xs), np.stack(ys)


def fit(net, x: np.ndarray, y: np.ndarray, epochs: int, lr: float, batch: int, gen,
        label: str = "") -> list[float]:
    """Minibatch cross-entropy against the expert's action distribution; returns the epoch losses.
    With ``label``, prints a progress line at most every 5 s."""
    import time

    import torch

    from stages.common.optim import Adam

    opt = Adam(net.parameters(), lr=lr)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    losses = []
    last = time.perf_counter()
    for ep in range(epochs):
        perm = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for i in range(0, len(xt), batch):
            idx = perm[i:i + batch]
            logp = torch.log_softmax(net(xt[idx]), dim=1)
            loss = -(yt[idx] * logp).sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / len(xt))
        if label and time.perf_counter() - last > 5:
            last = time.perf_counter()
            print(f"    {label}: epoch {ep + 1}/{epochs}, loss {losses[-1]:.4f}", flush=True)
    return losses


def rollout(net, tasks: list[Task], view_radius: int | None, max_steps: int, beta: float = 0.0,
            rng: np.random.Generator | None = None, record: bool = False):
    """Run the policy on every task at once (one batched forward pass per step). With ``beta`` > 0
    each step follows the expert with probability beta (DAgger's mixture). Returns the success
    flags, the steps taken, and (``record``) every visited state with its expert label."""
    import torch

    m = len(tasks)
    cells = [t.maze.start for t in tasks]
    keys = [0] * m
    alive = np.ones(m, dtype=bool)
    success = np.zeros(m, dtype=bool)
    steps = np.zeros(m, dtype=np.int64)
    xs, ys = [], []
    for _ in range(max_steps):
        idx = np.flatnonzero(alive)
        if len(idx) == 0:
            break
        obs = np.stack([encode(tasks[i].maze, cells[i], keys[i], view_radius, tasks[i].static) for i in idx])
        with torch.no_grad():
            acts = net(torch.from_numpy(obs)).argmax(1).numpy()
        for j, i in enumerate(idx):
            a = int(acts[j])
            if record or beta > 0:
                y = tasks[i].label(cells[i], keys[i])
                if record and y.sum() > 0:
                    xs.append(obs[j])
                    ys.append(y)
                if beta > 0 and y.sum() > 0 and rng.random() < beta:
                    a = int(np.flatnonzero(y)[0])
            cells[i], keys[i], outcome = transition(tasks[i].maze, cells[i], keys[i], a)
            steps[i] += 1
            if outcome is not None:
                alive[i] = False
                success[i] = outcome == "goal"
    data = (np.stack(xs), np.stack(ys)) if record and xs else None
    return success, steps, data


def train_bc(tasks: list[Task], view_radius: int | None, epochs: int, lr: float, batch: int, seed: int,
             width: int = 32, hidden: int = 128, label: str = ""):
    """Behaviour cloning on one optimal demonstration per training maze. The initial weights come
    from ``torch.manual_seed(seed)``, the minibatch order from stream 0 of the seed."""
    import torch

    from stages.common.seeds import torch_generator

    torch.manual_seed(seed)
    gen = torch_generator(seed, 0)
    net = policy_net(tasks[0].maze.n, width, hidden)
    x, y = expert_demos(tasks, view_radius)
    losses = fit(net, x, y, epochs, lr, batch, gen, label)
    return net, {"loss": losses, "n_samples": len(x)}


def train_dagger(tasks: list[Task], view_radius: int | None, epochs: int, lr: float, batch: int, seed: int,
                 iterations: int, epochs_per_iter: int, max_steps: int, width: int = 32, hidden: int = 128,
                 bc=None, label: str = ""):
    """DAgger: behaviour cloning first (beta = 1), then ``iterations`` rounds of rolling out the
    mixture (expert with probability beta_i = 0.5^i), relabelling every visited state with the
    expert's optimal actions, aggregating, and training on the aggregate. ``bc``: a ``(net,
    info)`` that ``train_bc`` returned for the same tasks, seed and sizes (copied, not changed):
    it is what the first step would train, so it is not trained twice. The minibatch order comes
    from stream 1 of the seed, the mixture's coin from stream 2."""
    import copy

    from stages.common.seeds import rng as seed_rng
    from stages.common.seeds import torch_generator

    if bc is None:
        bc = train_bc(tasks, view_radius, epochs, lr, batch, seed, width, hidden, label)
    net, info = copy.deepcopy(bc[0]), bc[1]
    gen = torch_generator(seed, 1)
    rng = seed_rng(seed, 2)
    x, y = expert_demos(tasks, view_radius)
    losses = list(info["loss"])
    sizes = [len(x)]
    for i in range(1, iterations + 1):
        _, _, data = rollout(net, tasks, view_radius, max_steps, beta=0.5 ** i, rng=rng, record=True)
        if data is not None:
            x, y = np.concatenate([x, data[0]]), np.concatenate([y, data[1]])
        losses += fit(net, x, y, epochs_per_iter, lr, batch, gen, label and f"{label} round {i}")
        sizes.append(len(x))
    return net, {"loss": losses, "n_samples": len(x), "aggregate_sizes": sizes}


def act(net, obs: np.ndarray) -> np.ndarray:
    """Greedy actions for a batch of (12, n, n) observations."""
    import torch

    with torch.no_grad():
        return net(torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))).argmax(1).numpy()


def load_policy(weights, config, name: str | None = None):
    """(net, n) from a saved state dict and the models' config.json (``name``: which entry; by
    default the one whose weights file is ``weights``)."""
    import json
    from pathlib import Path

    import torch

    cfg = json.loads(Path(config).read_text())
    key = name or Path(weights).stem
    c = cfg[key] if key in cfg else next(iter(cfg.values()))
    net = policy_net(c["n"], c["width"], c["hidden"])
    net.load_state_dict(torch.load(weights, weights_only=True))
    net.eval()
    return net, c["n"]
