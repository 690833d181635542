"""t2mir on the verdict-seed axis: a seed's figures depend on that seed alone, the ledger finds
every claim's figures per seed, the routing-free control is what it says, the split property
(retired from the ledger) holds on every seed, and the benchmarks refuse verdict seeds."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from stages.common.seeds import per_seed_metrics, run_seeds
from stages.t2mir.icl import ICT, STUDY_VARIANTS, encode, load_tasks, sample_batch
from stages.t2mir.run import evaluate_seed, prepare_seed, tasks_of, train_seed
from tests.helpers import assert_claims_read_every_seed

REPO = Path(__file__).resolve().parents[2]
CFG = dict(steps=8, tasks_per_batch=4, contexts_per_task=2, k=6, lr=3e-3, d=16, heads=2, layers=1,
           n_token=4, n_task=4, top_k=2, hidden=8, balance_w=0.1, contrast_w=0.01, tau=0.1)


def seed_figures(seed: int) -> dict:
    tasks = tasks_of(prepare_seed(4, 0.25, 30, seed))
    models, _ = train_seed(tasks, CFG, seed, STUDY_VARIANTS)
    return evaluate_seed(models, tasks, CFG["k"], 10, 3, 6, seed)[0]


@pytest.fixture(scope="module")
def two_seeds():
    return run_seeds([1000, 1001], seed_figures)


def test_a_seeds_figures_depend_on_that_seed_alone(two_seeds):
    alone = run_seeds([1001], seed_figures)
    assert alone[1001] == two_seeds[1001]
    assert two_seeds[1000] != two_seeds[1001]          # the seed does change the figures


def test_the_ledger_finds_every_claims_figures_per_seed(two_seeds):
    m = per_seed_metrics(two_seeds)
    assert sorted(m["per_seed"]) == ["1000", "1001"]
    assert_claims_read_every_seed("t2mir", m, [1000, 1001])


def test_a_must_whose_control_holds_is_not_specific(two_seeds):
    from stages.common.claims import evaluate, load_claims

    m = per_seed_metrics(two_seeds)
    for i, s in enumerate(m["per_seed"].values()):
        s["t2mir_minus_dense"]["return"] = 2.0 + 0.1 * i
        s["uniform_minus_dense"]["return"] = 1.5 + 0.1 * i      # the control beats dense too
    cf = load_claims(REPO / "stages/t2mir/claims.yaml")
    rows = {r["id"]: r for r in evaluate(cf, m, [1000, 1001])}
    assert rows["t2mir_ge_dense_return"]["verdict"] == "not specific"
    for i, s in enumerate(m["per_seed"].values()):
        s["uniform_minus_dense"]["return"] = -1.0 + 0.1 * i     # the control loses: the must holds
    rows = {r["id"]: r for r in evaluate(cf, m, [1000, 1001])}
    assert rows["t2mir_ge_dense_return"]["verdict"] == "holds"


def test_prepare_seed_splits_are_disjoint_and_differ_by_seed():
    """The retired must goal_split_disjoint, as a test of the code on every seed."""
    splits = {}
    for seed in range(6):
        a = prepare_seed(6, 0.2, 20, seed)
        tr, te = {tuple(g) for g in a["train_goals"]}, {tuple(g) for g in a["test_goals"]}
        assert not tr & te and len(tr | te) == 36 and len(te) == 7
        assert ((a["test_s2"] == a["test_goals"][:, None]).all(-1) == (a["test_r"] > 0)).all()
        splits[seed] = frozenset(te)
    assert len(set(splits.values())) > 1


def test_load_tasks_reads_a_seed_and_names_a_missing_one(tmp_path):
    a = prepare_seed(4, 0.25, 10, 3)
    np.savez(tmp_path / "t.npz", seeds=np.array([3]), **{f"s3/{k}": v for k, v in a.items()})
    t = load_tasks(tmp_path / "t.npz", 3)
    assert np.array_equal(t["test"][0], a["test_goals"]) and np.array_equal(t["train"][1]["r"], a["train_r"])
    with pytest.raises(KeyError, match="no tasks for seed 4"):
        load_tasks(tmp_path / "t.npz", 4)


def test_uniform_is_t2mir_without_routing():
    """Same parameters as T2MIR (same initialisation under a seed), each branch the plain mean of its
    experts, the routers unused (changing them changes nothing) and no router loss."""
    kw = dict(d=16, heads=2, layers=1, n_token=4, n_task=4, top_k=2, hidden=8)
    torch.manual_seed(0)
    u = ICT(4, "uniform", **kw)
    torch.manual_seed(0)
    t = ICT(4, "t2mir", **kw)
    su, st = u.state_dict(), t.state_dict()
    assert su.keys() == st.keys() and all(torch.equal(su[k], st[k]) for k in su)
    x = encode(sample_batch(np.array([[1, 1], [2, 3]]), 4, 5, np.random.default_rng(0)), 4)
    ffn = u.blocks[-1].ffn
    h = torch.randn(2, 6, 16)
    y, aux = ffn(h)
    assert aux == {}
    want_tok = sum(ffn.tok(h, torch.eye(4)[i].expand(2, 6, 4)) for i in range(4)) / 4
    want_task = sum(ffn.task(h, torch.eye(4)[i].expand(2, 6, 4)) for i in range(4)) / 4
    assert torch.allclose(y, torch.cat([want_tok, want_task], -1), atol=1e-5)
    before = u(x)[0]
    with torch.no_grad():
        ffn.tok_gate.weight.add_(1.0)
        ffn.task_gate.weight.add_(1.0)
    assert torch.equal(u(x)[0], before)
    assert not torch.allclose(t(x)[0], before)        # T2MIR's routing makes a difference


@pytest.mark.parametrize("script", ["calibration.py", "seeds.py"])
def test_benchmarks_refuse_verdict_seeds(script):
    out = subprocess.run([sys.executable, str(REPO / "benchmarks/t2mir" / script), "--seeds", "0,1"],
                         cwd=REPO, capture_output=True, text=True)
    assert out.returncode != 0 and "calibration seeds >= 1000" in out.stderr
