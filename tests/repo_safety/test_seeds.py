"""Seeds as an axis (docs/VERDICTS.md, section 1): a seed's figures depend on that seed alone, the
metrics layout the ledger reads, and the claims judged over the seeds with their controls."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stages.common.claims import evaluate, load_claims
from stages.common.runtime.params import load_study
from stages.common.seeds import per_seed_metrics
from stages.repo_safety.params import RepoSafetyParams
from tests.helpers import assert_claims_read_every_seed

REPO = Path(__file__).resolve().parents[2]
SEEDS = [1000, 1001]                     # calibration seeds (any seed would do in a test)


@pytest.fixture(scope="module")
def smoke(real_params):
    _, p = load_study("repo_safety", RepoSafetyParams, real_params, profile="smoke")
    return p


def _data(p, seeds):
    from stages.repo_safety.data import fraction_key
    from stages.repo_safety.prepare import build

    return {(s, fraction_key(i.fraction)): (i.reward, i.cost, i.harmful) for s in seeds for i in build(p.prepare, s)}


@pytest.fixture(scope="module")
def two_seeds(smoke):
    from stages.repo_safety.train import train_seeds

    data = _data(smoke, SEEDS)
    return data, train_seeds(data, smoke.prepare.kl_beta, smoke.prepare.budget, smoke.train)


def test_a_seeds_figures_depend_on_that_seed_alone(smoke, two_seeds):
    """Seed 1001 run alone (its own batch) gets the instances, policies and figures it got batched
    with seed 1000; seed 1000's instance and figures differ from it."""
    from stages.repo_safety.train import train_seeds

    data, (figs, arrays, curves, _) = two_seeds
    alone_data = _data(smoke, SEEDS[1:])
    for k, v in alone_data.items():
        assert all(np.array_equal(a, b) for a, b in zip(v, data[k]))
    a_figs, a_arrays, a_curves, _ = train_seeds(alone_data, smoke.prepare.kl_beta, smoke.prepare.budget, smoke.train)
    assert a_figs[SEEDS[1]] == figs[SEEDS[1]] and a_curves[SEEDS[1]] == curves[SEEDS[1]]
    assert all(np.array_equal(a_arrays[k], arrays[k]) for k in a_arrays)
    assert not np.array_equal(data[(SEEDS[0], "0.12")][1], data[(SEEDS[1], "0.12")][1])
    assert figs[SEEDS[0]]["0.12"]["repo_exact"] != figs[SEEDS[1]]["0.12"]["repo_exact"]


def _metrics(smoke, two_seeds):
    from stages.repo_safety.evaluate import seed_metrics
    from stages.repo_safety.prepare import build, summary

    _, (figs, _, _, _) = two_seeds
    p = smoke
    train = per_seed_metrics({s: {"instances": figs[s]} for s in SEEDS}, beta=p.prepare.kl_beta,
                             budget=p.prepare.budget, margin=p.train.margin, tightened_share=p.train.tightened_share)
    prep = per_seed_metrics({s: summary(build(p.prepare, s)) for s in SEEDS})
    return seed_metrics(train, prep, p.evaluate.primary_fraction)


def test_the_ledger_finds_every_claims_figures_per_seed(smoke, two_seeds):
    """Every claim's metric, control and context is in each seed's figures, and every claim not
    retired is judged on the two seeds (none `not run`)."""
    m = _metrics(smoke, two_seeds)
    assert sorted(m["per_seed"]) == ["1000", "1001"] and m["seeds"] == SEEDS
    assert_claims_read_every_seed("repo_safety", m, SEEDS)



def test_musts_with_a_passing_control_are_not_specific(smoke, two_seeds):
    """Planted: the baseline with RePO's margin as safe per prompt as RePO, and the tightened expected
    constraint as helpful. Both comparative musts then read `not specific`; with the controls failing
    they hold."""
    m = _metrics(smoke, two_seeds)
    cf = load_claims(REPO / "stages/repo_safety/claims.yaml")
    for i, s in enumerate(m["per_seed"].values()):
        s["exact"]["repo"]["violating_fraction"] = 0.01 * i
        s["exact"]["baseline_margin"]["violating_fraction"] = 0.02
        s["exact"]["helpfulness_ratio"] = 0.90 + 0.01 * i
        s["exact"]["tightened"]["helpfulness_ratio"] = 0.91 + 0.005 * i
    rows = {r["id"]: r for r in evaluate(cf, m, SEEDS)}
    assert rows["repo_per_prompt_safe"]["verdict"] == "not specific"
    assert rows["repo_keeps_helpfulness"]["verdict"] == "not specific"
    for s in m["per_seed"].values():
        s["exact"]["baseline_margin"]["violating_fraction"] = 0.2
        s["exact"]["tightened"]["helpfulness_ratio"] = 0.6 + s["exact"]["helpfulness_ratio"] / 100
    rows = {r["id"]: r for r in evaluate(cf, m, SEEDS)}
    assert rows["repo_per_prompt_safe"]["verdict"] == "holds"
    assert rows["repo_keeps_helpfulness"]["verdict"] == "holds"
    assert rows["repo_keeps_helpfulness"]["control"]["verdict"] == "fails"
    m["per_seed"]["1001"]["exact"]["repo"]["violating_fraction"] = 0.05       # one seed over the line
    assert {r["id"]: r for r in evaluate(cf, m, SEEDS)}["repo_per_prompt_safe"]["verdict"] == "fails"


def test_the_smoke_controls_are_the_arms_they_name(smoke, two_seeds):
    """The safety control is the expected constraint tightened by the margin (below the baseline's
    average cost; converged to budget - margin in test_policy.py, the smoke's 400 steps are short);
    the helpfulness control leaves at most floor(share n) prompts violating."""
    m = _metrics(smoke, two_seeds)
    for s in m["per_seed"].values():
        assert s["exact"]["baseline_margin"]["cost_excess"] < s["exact"]["baseline"]["cost_excess"] - smoke.train.margin / 2
        n = smoke.prepare.n_prompts
        assert s["exact"]["tightened"]["violating_fraction"] <= np.floor(smoke.train.tightened_share * n) / n + 1e-12


@pytest.mark.parametrize("script,arg", [("calibration", "--seeds=0,1"), ("seeds", "--seeds=1000,4")])
def test_calibration_scripts_refuse_verdict_seeds(script, arg):
    r = subprocess.run([sys.executable, "-m", f"benchmarks.repo_safety.{script}", arg],
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "seeds >= 1000 only" in r.stderr, r.stderr
