"""The learners on cases with a known answer: behaviour cloning on one maze reproduces the expert
(success 1); the rollout scores an expert-copying net at 1 and a wall-bumping one at 0; DAgger
aggregates the states it visits; a saved policy loads back to the same actions."""
from __future__ import annotations

import numpy as np
import torch

from stages.labyrinth.imitate import Task, act, expert_demos, load_policy, rollout, train_bc, train_dagger
from stages.labyrinth.maze import generate, optimal_length


def tasks(k, n=5, variant="base", seed=0):
    rng = np.random.default_rng(seed)
    return [Task.of(generate(n, variant, rng)) for _ in range(k)]


def test_expert_demos_have_the_optimal_length():
    ts = tasks(3)
    x, y = expert_demos(ts, None)
    assert len(x) == sum(optimal_length(t.maze) for t in ts) and (y.sum(1) == 1).all()


class Constant(torch.nn.Module):
    def __init__(self, a):
        super().__init__()
        self.a = a

    def forward(self, x):
        out = torch.zeros(len(x), 4)
        out[:, self.a] = 1.0
        return out


def test_rollout_scores_known_policies():
    ts = tasks(4)
    ok, steps, _ = rollout(Constant(0), ts, None, 20)                # always up: never reaches (4,4)
    assert not ok.any() and (steps == 20).all()
    ok, _, _ = rollout(Constant(0), ts, None, 20, beta=1.0, rng=np.random.default_rng(0))   # the expert
    assert ok.all()


def test_bc_memorises_one_maze_and_dagger_aggregates(tmp_path):
    ts = tasks(1, variant="key_door")
    net, info = train_bc(ts, None, epochs=80, lr=1e-2, batch=64, seed=0, width=8, hidden=32)
    assert rollout(net, ts, None, 100)[0].all()
    ts2 = tasks(2)
    _, info = train_dagger(ts2, None, epochs=5, lr=3e-3, batch=64, seed=0, iterations=2, epochs_per_iter=2,
                           max_steps=40, width=8, hidden=32)
    sizes = info["aggregate_sizes"]
    assert sizes[0] == sum(optimal_length(t.maze) for t in ts2) and sizes[2] > sizes[1] > sizes[0]
    torch.save(net.state_dict(), tmp_path / "bc.pt")
    (tmp_path / "config.json").write_text('{"bc": {"n": 5, "width": 8, "hidden": 32, "view_radius": null}}')
    back, n = load_policy(tmp_path / "bc.pt", tmp_path / "config.json")
    x, _ = expert_demos(ts, None)
    assert n == 5 and np.array_equal(act(back, x), act(net, x))
