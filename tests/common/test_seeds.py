"""stages.common.seeds: per-seed streams, seeds one after another, a seed dimension (torch.func),
the per_seed layout of a metrics file, and seeds in shards (a matrix stage)."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from stages.common.seeds import (call_stacked, per_seed_metrics, rng, run_seeds, stack_modules,
                                 torch_generator)


REPO = Path(__file__).resolve().parents[2]


def test_streams_are_reproducible_and_independent():
    assert rng(3, 1).random() == rng(3, 1).random()
    assert rng(3, 1).random() != rng(3, 2).random() != rng(4, 1).random()
    a = torch.randn(4, generator=torch_generator(3, 1))
    assert torch.equal(a, torch.randn(4, generator=torch_generator(3, 1)))
    assert not torch.equal(a, torch.randn(4, generator=torch_generator(4, 1)))


def test_run_seeds_seeds_every_source_per_seed(capsys):
    got = run_seeds([5, 7], lambda s: (random.random(), float(np.random.rand()), float(torch.rand(1))))
    for seed in (5, 7):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        assert got[seed] == (random.random(), float(np.random.rand()), float(torch.rand(1)))
    assert "seed 7 (2/2) done" in capsys.readouterr().out


def _net():
    return torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))


def test_stacked_models_are_the_per_seed_models():
    """Each slice of the stacked call is the model built under that seed, applied alone."""
    seeds = [0, 1, 2]
    params, buffers, base = stack_modules(_net, seeds)
    x = torch.randn(3, 5, 3)                               # a batch of 5 inputs per seed
    out = call_stacked(base, params, buffers, x)
    shared = call_stacked(base, params, buffers, x[0], in_dims=None)
    for i, seed in enumerate(seeds):
        torch.manual_seed(seed)
        alone = _net()
        torch.testing.assert_close(out[i], alone(x[i]))
        torch.testing.assert_close(shared[i], alone(x[0]))


def test_training_the_stack_trains_each_seed_as_if_alone():
    """Full-batch SGD on the stacked parameters (one optimizer, summed losses) gives each seed
    the weights that training its own model alone gives."""
    seeds = [0, 1]
    x = torch.randn(2, 16, 3, generator=torch.Generator().manual_seed(1000))
    y = x.sum(-1, keepdim=True)
    params, buffers, base = stack_modules(_net, seeds)
    opt = torch.optim.SGD(params.values(), lr=0.1)
    for _ in range(20):
        opt.zero_grad()
        ((call_stacked(base, params, buffers, x) - y) ** 2).mean(dim=(1, 2)).sum().backward()
        opt.step()
    for i, seed in enumerate(seeds):
        torch.manual_seed(seed)
        alone = _net()
        o = torch.optim.SGD(alone.parameters(), lr=0.1)
        for _ in range(20):
            o.zero_grad()
            ((alone(x[i]) - y[i]) ** 2).mean().backward()
            o.step()
        for name, p in alone.named_parameters():
            torch.testing.assert_close(params[name][i], p.detach(), rtol=1e-5, atol=1e-6)


def test_per_seed_metrics_layout():
    m = per_seed_metrics({0: {"a": 1.0, "b": {"c": 2, "tag": "x"}, "curve": [1.0, 3.0]},
                          1: {"a": 3.0, "b": {"c": 4, "tag": "x"}, "curve": [3.0, 5.0]}},
                         closed_form=0.5)
    assert m["a"] == 2.0 and m["b"] == {"c": 3.0, "tag": "x"} and m["curve"] == [2.0, 4.0]
    assert m["closed_form"] == 0.5 and m["seeds"] == [0, 1]
    assert m["per_seed"]["1"]["a"] == 3.0 and set(m["per_seed"]) == {"0", "1"}
    with pytest.raises(ValueError, match="reserved"):
        per_seed_metrics({0: {"a": 1}}, per_seed=1)
    with pytest.raises(ValueError, match="no seed ran"):
        per_seed_metrics({})


# --------------------------------------------------------------------------------------
# seeds in shards (a matrix stage)
# --------------------------------------------------------------------------------------
def _ctx(seeds, shard):
    from stages.common.runtime.params import CommonParams
    from stages.common.runtime.stage import StageContext

    common = CommonParams(profile="default", device="cpu",
                          seeds={"smoke": [0, 1], "default": seeds, "paper": list(range(10))})
    return StageContext("s", "train", "s-train", common, None, Path("."), None, shard)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_shards_share_out_every_seed_once_in_order(n):
    seeds = [0, 1, 2, 3, 4]
    parts = [_ctx(seeds, (i, n)).seeds for i in range(n)]
    assert sorted(s for p in parts for s in p) == seeds
    assert all(p == sorted(p) for p in parts)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1        # as even as it can be
    assert _ctx(seeds, None).seeds == seeds


def test_gather_shards_names_missing_duplicate_and_extra_seeds():
    from stages.common.seeds import gather_shards

    gather_shards({"shard-0": [0, 2, 4], "shard-1": [1, 3]}, [0, 1, 2, 3, 4])       # complete: no error
    with pytest.raises(ValueError, match=r"missing \[1, 3\]"):
        gather_shards({"shard-0": [0, 2, 4]}, [0, 1, 2, 3, 4])
    with pytest.raises(ValueError, match="seed 2 is in two shards' outputs: shard-0 and shard-2"):
        gather_shards({"shard-0": [0, 2], "shard-1": [1], "shard-2": [2]}, [0, 1, 2])
    with pytest.raises(ValueError, match=r"extra \[7\] \(from \['shard-1'\]\)"):
        gather_shards({"shard-0": [0], "shard-1": [1, 7]}, [0, 1])


@pytest.mark.parametrize("args, message", [
    ([], "escort_belief-train is a matrix stage over seed shards: run one of escort_belief-train@0, escort_belief-train@1"),
    (["--shard", "5"], "dvc.yaml has no stage 'escort_belief-train@5'"),
    (["--shard", "x"], "--shard needs a shard number, got ['x']")])
def test_a_matrix_stage_refuses_a_missing_or_unknown_shard(args, message, stage_env, python_exe):
    """Refused before any compute, exit 2, by name (the real escort_belief train stage)."""
    import subprocess

    res = subprocess.run([python_exe, "-m", "stages.escort_belief.train", *args], cwd=REPO, env=stage_env,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and message in res.stderr, res.stderr[-2000:]
