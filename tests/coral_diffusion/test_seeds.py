"""Seeds as an axis (docs/VERDICTS.md, section 1): a seed's figures depend on that seed alone, the
metrics layout the ledger reads, and the claims judged over the seeds with their controls."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from stages.common.claims import evaluate, load_claims  # noqa: E402
from stages.common.runtime.params import load_study  # noqa: E402
from stages.common.seeds import per_seed_metrics  # noqa: E402
from stages.coral_diffusion.params import CoralDiffusionParams  # noqa: E402
from tests.helpers import assert_claims_read_every_seed  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SEEDS = [1000, 1001]                     # calibration seeds (any seed would do in a test)


@pytest.fixture(scope="module")
def smoke(real_params):
    _, p = load_study("coral_diffusion", CoralDiffusionParams, real_params, profile="smoke")
    return p


def _run(p, seeds):
    """prepare, train and evaluate for ``seeds`` as the stages run them (the calibration's path)."""
    from benchmarks.coral_diffusion.calibration import run

    return run(p, seeds, progress=False)[0]


@pytest.fixture(scope="module")
def two_seeds(smoke):
    return _run(smoke, SEEDS)


def test_a_seeds_figures_depend_on_that_seed_alone(smoke, two_seeds):
    """Seed 1001 run alone (its five models in a stack of five, not ten) gets every figure it got
    beside seed 1000; seed 1000's figures differ from it."""
    alone = _run(smoke, [SEEDS[1]])[SEEDS[1]]
    assert alone == two_seeds[SEEDS[1]]
    assert two_seeds[SEEDS[0]]["lt"]["coral"] != two_seeds[SEEDS[1]]["lt"]["coral"]


def test_every_arm_has_its_figures(two_seeds):
    r = two_seeds[SEEDS[0]]
    assert set(r["lt"]) >= {"ddpm", "coral", "shuffled"} and set(r["bal"]) >= {"ddpm", "coral"}
    for name, arm in (("lt", "ddpm"), ("lt", "coral"), ("lt", "shuffled"), ("bal", "ddpm"), ("bal", "coral")):
        s = r[name][arm]
        assert 0 <= s["overlap"] <= 1 and 0 <= s["tail_accuracy"] <= 1 and s["tail_frechet"] >= 0
    lt = r["lt"]
    assert lt["tail_accuracy_gain"] == lt["coral"]["tail_accuracy"] - lt["ddpm"]["tail_accuracy"]
    assert lt["shuffled_tail_accuracy_gain"] == lt["shuffled"]["tail_accuracy"] - lt["ddpm"]["tail_accuracy"]
    assert lt["shuffled_overlap_drop"] == lt["ddpm"]["overlap"] - lt["shuffled"]["overlap"]
    assert r["imbalance_overlap_excess"] == lt["ddpm"]["overlap"] - r["bal"]["ddpm"]["overlap"]


def _metrics(two_seeds):
    return per_seed_metrics(two_seeds, tail_classes=[7, 8, 9], head_classes=[0, 1, 2])


def test_the_ledger_finds_every_claims_figures_per_seed(two_seeds):
    """Every claim's metric, control and context is in each seed's figures, and every claim not
    retired is judged on the two seeds (none `not run`)."""
    m = _metrics(two_seeds)
    assert sorted(m["per_seed"]) == ["1000", "1001"] and m["seeds"] == SEEDS
    assert_claims_read_every_seed("coral_diffusion", m, SEEDS)


def test_the_must_with_a_passing_control_is_not_specific(two_seeds):
    """Planted: CORAL raises tail accuracy on every seed. With the shuffled-label control raising it
    as much, the must reads `not specific`; with the control not raising it, it holds; and a must
    that fails stays `fails` whatever its control does."""
    m = _metrics(two_seeds)
    cf = load_claims(REPO / "stages/coral_diffusion/claims.yaml")

    def verdict(gain, control):
        for i, s in enumerate(m["per_seed"].values()):
            s["lt"]["tail_accuracy_gain"] = gain + 0.01 * i
            s["lt"]["shuffled_tail_accuracy_gain"] = control + 0.02 * i
        rows = {r["id"]: r for r in evaluate(cf, m, SEEDS)}
        return rows["tail_accuracy_raised"]["verdict"], rows["tail_accuracy_raised"]["control"]["verdict"]

    assert verdict(0.2, 0.2) == ("not specific", "holds")
    assert verdict(0.2, -0.2) == ("holds", "fails")
    assert verdict(-0.2, 0.2) == ("fails", "holds")


def test_benchmarks_refuse_verdict_seeds():
    import subprocess
    import sys

    for script, arg in (("calibration", "--seeds=0,1"), ("seeds", "--seeds=1000,4")):
        r = subprocess.run([sys.executable, "-m", f"benchmarks.coral_diffusion.{script}", arg],
                           cwd=REPO, capture_output=True, text=True, timeout=120)
        assert r.returncode != 0 and "seeds >= 1000 only" in r.stderr, (script, r.stderr)


def test_seed_data_names_the_missing_seed():
    from stages.coral_diffusion.arms import key, seed_data

    arrays = {key(0, "lt_x"): np.zeros(2), key(1, "lt_x"): np.ones(2)}
    assert seed_data(arrays, 1)["lt_x"].tolist() == [1.0, 1.0]
    with pytest.raises(KeyError, match=r"seed 3 is not in the prepare stage's files \(seeds there: \[0, 1\]\)"):
        seed_data(arrays, 3)
