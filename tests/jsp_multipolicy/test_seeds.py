"""Seeds as an axis (docs/VERDICTS.md, section 1): a seed's networks and figures depend on that seed
alone however the seeds are batched, the metrics layout the ledger reads, the claims judged over
the seeds with their controls, and the benchmarks' refusal of verdict seeds."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stages.common.claims import evaluate, load_claims
from stages.common.runtime.params import load_study
from stages.common.seeds import per_seed_metrics
from stages.jsp_multipolicy.params import PARAMS
from tests.helpers import assert_claims_read_every_seed

REPO = Path(__file__).resolve().parents[2]
SEEDS = [1000, 1001]                     # calibration seeds (any seed would do in a test)


@pytest.fixture(scope="module")
def smoke(real_params):
    return load_study("jsp_multipolicy", PARAMS, real_params, profile="smoke")[1]


def stand_in_tests(seeds, p):
    """Each seed's test shops with MWKR's makespans as a stand-in reference (no CP-SAT here)."""
    from stages.jsp_multipolicy.refs import test_shops
    from stages.jsp_multipolicy.jsp import rule_makespans

    counts = {"g10": p.prepare.n_test_10, "g15": p.prepare.n_test_15, "flow": p.prepare.n_test_flow}
    out = {}
    for s in seeds:
        a = {}
        for name, (M, D) in test_shops(s, counts).items():
            a |= {f"{name}_machines": M, f"{name}_durations": D, f"{name}_ref": rule_makespans(M, D, "MWKR"),
                  f"{name}_optimal": np.zeros(len(M), bool)}
        out[s] = a
    return out


def run(seeds, p):
    from stages.jsp_multipolicy.experiment import figures, gaps, train_all, untrained

    tests = stand_in_tests(seeds, p)
    nets, hist, _ = train_all(seeds, p.train)
    nets |= untrained(seeds, p.train)
    return nets, hist, figures(gaps(tests, nets, seeds, p.evaluate.samples), tests, p.evaluate.ci_level)


@pytest.fixture(scope="module")
def two_seeds(smoke):
    return run(SEEDS, smoke)


def test_a_seeds_networks_and_figures_depend_on_that_seed_alone(smoke, two_seeds):
    """Seed 1001 trained and evaluated alone (after other draws from the global generators) gets
    the networks, histories and figures it got batched with seed 1000; seed 1000 differs."""
    import torch

    np.random.random(3)
    torch.rand(5)
    nets1, hist1, figs1 = run([SEEDS[1]], smoke)
    nets, hist, figs = two_seeds
    for arm in ("single", "multi", "blind", "l2d"):
        a, b = nets[arm][1].state_dict(), nets1[arm][0].state_dict()
        assert all(torch.equal(a[k], b[k]) for k in a), arm
        assert hist[arm][SEEDS[1]] == hist1[arm][SEEDS[1]] != hist[arm][SEEDS[0]], arm
    assert figs[SEEDS[1]] == figs1[SEEDS[1]]
    assert figs[SEEDS[0]]["gap10"]["MWKR"] == 0.0 and figs[SEEDS[0]]["gap10"]["single"] != figs[SEEDS[1]]["gap10"][
        "single"]


def test_every_arm_has_its_figures(two_seeds):
    figs = two_seeds[2][SEEDS[0]]
    for key in ("gap10", "gapflow"):
        assert {"single", "multi", "blind", "l2d", "l2d_greedy", "untrained_single", "untrained_multi", "SPT",
                "MWKR", "MOPNR", "multi_minus_l2d", "untrained_minus_best_rule"} <= set(figs[key])
    assert "l2d" not in figs["gap15"] and {"single", "multi", "blind"} <= set(figs["gap15"])
    g = figs["gap10"]
    assert g["worst_learned_minus_best_rule"] == max(g["single"], g["multi"]) - g[g["best_rule"]]
    assert g["multi_minus_l2d"] == g["multi"] - g["l2d"]


def metrics(two_seeds):
    return per_seed_metrics(two_seeds[2])


def test_the_ledger_finds_every_claims_figures_per_seed(two_seeds):
    m = metrics(two_seeds)
    assert sorted(m["per_seed"]) == ["1000", "1001"] and m["seeds"] == SEEDS
    assert_claims_read_every_seed("jsp_multipolicy", m, SEEDS)


def test_musts_with_a_passing_control_are_not_specific(two_seeds):
    """Planted: the single policy beats L2D as clearly as the multi-policy network (the L2D musts'
    control), and the blind arm beats single as clearly as multi (the multi-vs-single must's
    control): the musts read `not specific`; with the controls failing they hold."""
    m = metrics(two_seeds)
    cf = load_claims(REPO / "stages/jsp_multipolicy/claims.yaml")
    for i, s in enumerate(m["per_seed"].values()):
        for key in ("gap10", "gapflow"):
            s[key].update(multi=5.0 + i, single=6.0 + 1.1 * i, l2d=12.0 + i, blind=5.2 + i)
        s["gap10"].update(worst_learned_minus_best_rule=-10.0 - i, untrained_minus_best_rule=-3.0 - 0.1 * i)
    rows = {r["id"]: r for r in evaluate(cf, m, SEEDS)}
    for cid in ("multi_beats_l2d_jssp10", "multi_beats_l2d_flow10", "multi_beats_single_10x10",
                "learned_beat_rules_10x10"):
        assert rows[cid]["verdict"] == "not specific", (cid, rows[cid]["verdict"])
    for i, s in enumerate(m["per_seed"].values()):
        for key in ("gap10", "gapflow"):
            s[key].update(single=13.0 + 1.1 * i, blind=14.0 + i)
        s["gap10"].update(untrained_minus_best_rule=30.0 + i)
    rows = {r["id"]: r for r in evaluate(cf, m, SEEDS)}
    for cid in ("multi_beats_l2d_jssp10", "multi_beats_l2d_flow10", "multi_beats_single_10x10",
                "learned_beat_rules_10x10"):
        assert rows[cid]["verdict"] == "holds" and rows[cid]["control"]["verdict"] == "fails", cid


@pytest.mark.parametrize("script,args", [("calibration", ["--seeds=0,1"]), ("seeds", ["--seeds=1000,4"])])
def test_benchmarks_refuse_verdict_seeds(script, args):
    r = subprocess.run([sys.executable, "-m", f"benchmarks.jsp_multipolicy.{script}", *args], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "seeds >= 1000 only" in r.stderr, r.stderr
