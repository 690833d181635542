"""Seeds as an axis (docs/VERDICTS.md, section 1): a seed's figures depend on that seed alone, the
metrics layout the ledger reads, every claim judged over the seeds with its control, and the
benchmarks' refusal of verdict seeds."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from stages.common.claims import evaluate, load_claims  # noqa: E402
from stages.common.runtime.params import load_study  # noqa: E402
from stages.common.seeds import per_seed_metrics, run_seeds  # noqa: E402
from stages.llm_co_foarl import core  # noqa: E402
from stages.llm_co_foarl.params import PARAMS  # noqa: E402
from tests.helpers import assert_claims_read_every_seed  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SEEDS = [1000, 1001]                     # calibration seeds (any seed would do in a test)


@pytest.fixture(scope="module")
def smoke(real_params):
    _, p = load_study("llm_co_foarl", PARAMS, real_params, profile="smoke")
    return p


@pytest.fixture(scope="module")
def data(smoke):
    prep = smoke.prepare
    return core.solve_dataset({"tsp": prep.size.tsp, "kp": prep.size.kp}, prep.n_train, prep.n_test, 1, 1000)


def _seed(smoke, data, seed):
    tr = core.train_seed(data, smoke.train, seed, log=lambda m: None)
    ev = core.evaluate_seed(tr["models"], data, smoke.evaluate.samples, seed, log=lambda m: None)
    return tr, ev


@pytest.fixture(scope="module")
def two_seeds(smoke, data):
    return run_seeds(SEEDS, lambda s: _seed(smoke, data, s))


def _same(a, b) -> bool:
    """Equal figures, NaN (no feasible solution to average; the curve's step-0 loss) equal to NaN."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _weights(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_a_seeds_figures_depend_on_that_seed_alone(smoke, data, two_seeds):
    """Seed 1001 run alone (after other draws from the global generators) gets the weights and
    figures it got after seed 1000 in the same process; seed 1000's differ from it."""
    np.random.random(7)
    torch.rand(3)
    tr, ev = _seed(smoke, data, SEEDS[1])
    tr_b, ev_b = two_seeds[SEEDS[1]]
    for name in core.MODEL_NAMES:
        a, b = _weights(tr["models"][name]), _weights(tr_b["models"][name])
        assert all(torch.equal(a[k], b[k]) for k in a), name
    assert _same(ev["claim"], ev_b["claim"]) and _same(ev["ladder"], ev_b["ladder"])
    assert _same(tr["metrics"]["sft_curve"], tr_b["metrics"]["sft_curve"])
    first = _weights(two_seeds[SEEDS[0]][0]["models"]["sft"])
    assert not torch.equal(first["head.weight"], _weights(tr["models"]["sft"])["head.weight"])


def test_the_learning_curve_is_recorded_before_and_during_sft(smoke, two_seeds):
    curve = two_seeds[SEEDS[0]][0]["metrics"]["sft_curve"]
    assert [r["step"] for r in curve] == list(range(0, smoke.train.sft_steps + 1, smoke.train.curve_every))
    assert all(0 <= r["tsp_feasible"] <= 1 and 0 <= r["kp_feasible"] <= 1 for r in curve)
    assert curve[-1]["loss"] < curve[1]["loss"]                        # SFT lowers its loss


def test_the_control_spends_foarls_update_budget(smoke, two_seeds):
    m = two_seeds[SEEDS[0]][0]["metrics"]
    assert m["control_updates"] == m["foarl_updates"] == smoke.train.rl_steps * 2
    assert len(m["foarl_curve"]) == smoke.train.rl_steps * 2


def _metrics(two_seeds):
    return per_seed_metrics({s: ev for s, (_, ev) in two_seeds.items()})


def test_the_ledger_finds_every_claims_figures_per_seed(two_seeds):
    """Every claim's metric, baseline, control and context is in each seed's figures, and every
    claim is judged on the two seeds (none `not run`)."""
    m = _metrics(two_seeds)
    assert sorted(m["per_seed"]) == ["1000", "1001"] and m["seeds"] == SEEDS
    assert_claims_read_every_seed("llm_co_foarl", m, SEEDS)


def test_a_must_with_a_passing_control_is_not_specific(two_seeds):
    """Planted: FOARL and the equal-compute SFT control both raise the feasible rate on every seed:
    the must reads `not specific`; with the control's gain around 0 it holds."""
    m = _metrics(two_seeds)
    cf = load_claims(REPO / "stages/llm_co_foarl/claims.yaml")
    for k, s in enumerate(m["per_seed"].values()):
        s["claim"].update(feasible_gain_mean=0.20 + 0.01 * k, control_feasible_gain_mean=0.10 + 0.01 * k)
    rows = {r["id"]: r for r in evaluate(cf, m, SEEDS)}
    assert rows["foarl_raises_feasible_rate"]["verdict"] == "not specific"
    for k, s in enumerate(m["per_seed"].values()):
        s["claim"]["control_feasible_gain_mean"] = (-0.01, 0.012)[k]
    rows = {r["id"]: r for r in evaluate(cf, m, SEEDS)}
    assert rows["foarl_raises_feasible_rate"]["verdict"] == "holds"
    assert rows["foarl_raises_feasible_rate"]["control"]["verdict"] == "inconclusive"


def test_the_claim_figures_by_hand():
    """Pooled and per-problem figures from a hand-made result table."""
    def dec(f, g, a):
        return {"feasible_rate": f, "gap_feasible": g, "gap_all": a}

    res = {"sft": {"tsp": {"greedy": dec(0.8, 0.10, 0.28), "sample": dec(0.6, 0.20, 0.52), "best_of": dec(1, .05, .05)},
                   "kp": {"greedy": dec(0.5, 0.04, 0.52), "sample": dec(0.4, 0.06, 0.62), "best_of": dec(1, .02, .02)}},
           "foarl": {"tsp": {"greedy": dec(0.9, 0.12, 0.21), "sample": dec(0.8, 0.22, 0.38), "best_of": dec(1, .05, .05)},
                     "kp": {"greedy": dec(0.9, 0.08, 0.17), "sample": dec(0.8, 0.10, 0.28), "best_of": dec(1, .02, .02)}},
           "sft_more": {"tsp": {"greedy": dec(0.8, 0.08, 0.26), "sample": dec(0.6, 0.18, 0.51), "best_of": dec(1, .05, .05)},
                        "kp": {"greedy": dec(0.5, 0.04, 0.52), "sample": dec(0.4, 0.06, 0.62), "best_of": dec(1, .02, .02)}}}
    c = core.claim_figures(res, ["tsp", "kp"])
    assert c["feasible_gain_mean"] == pytest.approx((0.1 + 0.2 + 0.4 + 0.4) / 4)
    assert c["feasible_gain_mean_tsp"] == pytest.approx(0.15)
    assert c["gap_drop_mean_pct"] == pytest.approx(100 * (-0.02 - 0.02 - 0.04 - 0.04) / 4)
    assert c["control_gap_drop_mean_tsp_pct"] == pytest.approx(2.0)
    assert c["control_feasible_gain_mean_kp"] == pytest.approx(0.0)
    assert c["gap_all_drop_mean_kp_pct"] == pytest.approx(100 * (0.35 + 0.34) / 2)
    assert c["feasible_gain_vs_control_mean"] == pytest.approx((0.1 + 0.2 + 0.4 + 0.4) / 4)
    assert c["foarl_gap_tsp_pct"] == pytest.approx(12.0) and c["sft_feasible_kp"] == 0.5


@pytest.mark.parametrize("script, args", [("calibration", ["--seeds", "0,1000"]), ("seeds", ["--seeds", "1000,4"]),
                                          ("tsp_diagnosis", ["--seed", "3", "ladder"])])
def test_benchmarks_refuse_verdict_seeds(script, args):
    r = subprocess.run([sys.executable, "-m", f"benchmarks.llm_co_foarl.{script}", *args],
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "seeds >= 1000 only" in r.stderr, r.stderr
