"""labyrinth over verdict seeds: a seed's mazes and figures depend on that seed alone (the same in
a run of seeds [0, 1] as in a run of [1] only), seeds differ from one another, the stages' figures
are laid out per seed for every claim, DAgger started from the trained BC policy is the DAgger
that trains its own, and the split-overlap count sees a shared structure."""
from __future__ import annotations

import copy

import numpy as np
import torch

from stages.common.seeds import per_seed_metrics, run_seeds
from stages.labyrinth.evaluate import evaluate_seed
from stages.labyrinth.imitate import Task, train_bc, train_dagger
from stages.labyrinth.params import PARAMS
from stages.labyrinth.prepare import build, overlaps
from stages.labyrinth.train import train_seed
from tests.helpers import assert_claims_read_every_seed


def tiny_params(real_params):
    """The smoke profile, smaller still: 5x5 mazes, 4 training mazes, 2 epochs (seconds)."""
    d = copy.deepcopy(real_params["labyrinth"]["smoke"])
    d["prepare"].update(n_train=4, n_eval=3, n_test=4, variant_train=3, variant_test=3)
    d["train"].update(epochs=3, variant_epochs=2, dagger_epochs=2)
    return PARAMS.model_validate(d)


def figures(p, seed):
    mazes = build(p.prepare, seed)
    nets, _ = train_seed(mazes, p.train, p.prepare.view_radius, seed)
    return evaluate_seed(mazes, {k: v[0] for k, v in nets.items()}, p.train, p.prepare)


def test_a_seeds_figures_depend_on_that_seed_alone(real_params):
    p = tiny_params(real_params)
    both = run_seeds([0, 1], lambda s: figures(p, s))
    alone = run_seeds([1], lambda s: figures(p, s))
    assert both[1] == alone[1]
    a, b = build(p.prepare, 0), build(p.prepare, 1)
    assert [m.structure_hash() for m in a["base"]["test"]] != [m.structure_hash() for m in b["base"]["test"]]
    metrics = per_seed_metrics(both)
    assert set(metrics["per_seed"]) == {"0", "1"} and metrics["seeds"] == [0, 1]
    assert_claims_read_every_seed("labyrinth", metrics, [0, 1])


def test_dagger_from_the_trained_bc_equals_dagger_from_scratch():
    rng = np.random.default_rng(1000)
    from stages.labyrinth.maze import generate

    tasks = [Task.of(generate(5, "base", rng)) for _ in range(3)]
    kw = dict(epochs=4, lr=3e-3, batch=16, seed=7, width=8, hidden=16)
    bc = train_bc(tasks, None, **kw)
    before = {k: v.clone() for k, v in bc[0].state_dict().items()}
    reuse, _ = train_dagger(tasks, None, iterations=2, epochs_per_iter=2, max_steps=40, bc=bc, **kw)
    scratch, _ = train_dagger(tasks, None, iterations=2, epochs_per_iter=2, max_steps=40, **kw)
    assert all(torch.equal(a, b) for a, b in zip(reuse.state_dict().values(), scratch.state_dict().values()))
    assert all(torch.equal(before[k], v) for k, v in bc[0].state_dict().items())     # BC's policy left as it was
    assert not all(torch.equal(before[k], v) for k, v in reuse.state_dict().items())  # DAgger trained on


def test_overlap_count_sees_a_shared_structure():
    sp = build(PARAMS.model_validate({
        "prepare": {"n": 5, "n_train": 3, "n_eval": 3, "n_test": 3, "loop_fraction": 0.1, "variant_n": 4,
                    "variant_train": 2, "variant_test": 2, "view_radius": 1},
        "train": {"epochs": 1, "lr": 0.01, "batch": 8, "width": 4, "hidden": 8, "dagger_iterations": 1,
                  "dagger_epochs": 1, "variant_epochs": 1, "steps_per_cell": 4},
        "evaluate": {"gif_frames": 4}}).prepare, 1000)["base"]
    assert overlaps(sp) == 0
    sp["test"] = sp["test"] + [sp["train"][0]]
    assert overlaps(sp) == 1
