"""Seeds as an axis (docs/VERDICTS.md, section 1): a seed's figures depend on that seed alone,
the metrics layout the ledger reads, and the claims judged over the seeds with their controls."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stages.common.claims import evaluate, load_claims
from stages.common.runtime.params import load_study
from stages.common.seeds import per_seed_metrics, run_seeds
from stages.nav_knowledge.params import NavKnowledgeParams
from tests.helpers import assert_claims_read_every_seed

REPO = Path(__file__).resolve().parents[2]
SEEDS = [1000, 1001]                     # calibration seeds (any seed would do in a test)


@pytest.fixture(scope="module")
def smoke(real_params):
    _, p = load_study("nav_knowledge", NavKnowledgeParams, real_params, profile="smoke")
    return p


def _seed(p, seed):
    from stages.nav_knowledge.prepare import generate
    from stages.nav_knowledge.train import infer_seed

    return infer_seed(generate(p.prepare, seed), p.prepare, p.train, seed, progress=False)


@pytest.fixture(scope="module")
def two_seeds(smoke):
    return run_seeds(SEEDS, lambda s: _seed(smoke, s))


def test_a_seeds_figures_depend_on_that_seed_alone(smoke, two_seeds):
    """Seed 1001 run alone (after another draw from the global generators) gets the arrays it got
    after seed 1000 in the same process; seed 1000 differs from it."""
    np.random.random(7)
    alone = _seed(smoke, SEEDS[1])[0]
    both = two_seeds[SEEDS[1]][0]
    assert set(alone) == set(both) and all(np.array_equal(alone[k], both[k]) for k in alone)
    first = two_seeds[SEEDS[0]][0]
    assert not np.array_equal(first["p_sis_rm"], both["p_sis_rm"])


def test_every_arm_has_its_figures(two_seeds):
    from stages.nav_knowledge.train import NLL_ARMS, WALL_ARRAYS

    arrays, figures, cpu = two_seeds[SEEDS[0]]
    walls = arrays["known"].size
    assert all(arrays[k].shape == (walls,) for k in WALL_ARRAYS)
    assert all(np.isfinite(arrays[f"nll_{m}"]).all() and (arrays[f"nll_{m}"] >= 0).all() for m in NLL_ARMS)
    assert set(cpu) == {"sis", "sis_rm", "gibbs", "static"} and figures["particles"] > 0


def _metrics(two_seeds):
    from stages.nav_knowledge.evaluate import seed_metrics

    replan = {"identical_all": True, "events_total": 3, "speedup_64": 9.0, "speedup_vs_scipy_64": 2.0,
              "lpa_speedup_64": 3.0, "largest_size": 64, "speedup_vs_scipy_largest": 2.0,
              "speedup_vs_dijkstra_largest": 9.0}              # timings: any numbers do here
    return per_seed_metrics({s: seed_metrics(a, f, replan, 1.0) for s, (a, f, _) in two_seeds.items()})


def test_the_ledger_finds_every_claims_figures_per_seed(two_seeds):
    """Every claim's metric, baseline, control and context is in each seed's figures, and every
    claim not retired is judged on the two seeds (none `not run`)."""
    m = _metrics(two_seeds)
    assert sorted(m["per_seed"]) == ["1000", "1001"] and m["seeds"] == SEEDS
    assert_claims_read_every_seed("nav_knowledge", m, SEEDS)



def test_musts_with_a_passing_control_are_not_specific(two_seeds):
    """Planted: the static navigator as good as the paper's model on every seed. Both musts then
    read `not specific`; with the control failing they hold."""
    m = _metrics(two_seeds)
    cf = load_claims(REPO / "stages/nav_knowledge/claims.yaml")
    for s in m["per_seed"].values():
        s["auroc_relevant"].update(sis_rm=0.95, static=0.96)
        s["nll"].update(sis_rm=10.0, prior=20.0, static=10.5)
    m["per_seed"]["1001"]["auroc_relevant"]["sis_rm"] += 0.02       # some spread between the seeds
    m["per_seed"]["1001"]["nll"]["sis_rm"] += 0.5
    m["per_seed"]["1001"]["auroc_relevant"]["static"] += 0.01
    m["per_seed"]["1001"]["nll"]["static"] += 0.4
    rows = {r["id"]: r for r in evaluate(cf, m, SEEDS)}
    assert rows["auroc_relevant_walls"]["verdict"] == "not specific"
    assert rows["heldout_nll_beats_prior"]["verdict"] == "not specific"
    for s in m["per_seed"].values():
        s["auroc_relevant"]["static"] = 0.3 + s["auroc_relevant"]["sis_rm"] / 10
        s["nll"]["static"] = 30.0 + s["nll"]["sis_rm"] / 10
    rows = {r["id"]: r for r in evaluate(cf, m, SEEDS)}
    assert rows["auroc_relevant_walls"]["verdict"] == "holds"
    assert rows["heldout_nll_beats_prior"]["verdict"] == "holds"
    assert rows["heldout_nll_beats_prior"]["control"]["verdict"] == "fails"


def test_calibration_scripts_refuse_verdict_seeds():
    import subprocess
    import sys

    for script, arg in (("calibration", "--seeds=0,1"), ("seeds", "--seeds=1000,4"), ("replan", "--seed=0")):
        r = subprocess.run([sys.executable, "-m", f"benchmarks.nav_knowledge.{script}", arg],
                           cwd=REPO, capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "seeds >= 1000 only" in r.stderr, (script, r.stderr)
