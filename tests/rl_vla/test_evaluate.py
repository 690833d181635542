"""The paired comparison the claims check, against scipy's paired t test and a case by hand; the
metrics layout the claims read (every claim finds its figures in every seed's)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from stages.rl_vla.evaluate import METHODS, SPLITS, paired, summarise


def test_paired_interval_is_scipys_paired_t_interval():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    out = paired(a, b, 0.95)
    ci = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert out["mean"] == pytest.approx((a - b).mean())
    assert (out["low"], out["high"]) == pytest.approx((ci.low, ci.high))


def _success(sft_semantic):
    half = np.array([1, 1, 0, 0])
    success = {m: {s: half for s in SPLITS} for m in METHODS}
    success["ppo"] = {s: np.ones(4, int) for s in SPLITS}
    success["sft"] = {**{s: half for s in SPLITS}, "semantic": sft_semantic}
    return success


def test_summarise_by_hand():
    out = summarise(_success(np.zeros(4, int)), 0.95)
    assert out["ppo_minus_sft"]["semantic"] == 1.0      # every paired episode: 1 - 0
    assert out["ppo_minus_sft"]["execution"] == 0.5
    assert out["sft_more_minus_sft"]["semantic"] == 0.5
    assert out["success"]["ppo"]["visual_over_train"] == 1.0
    assert out["success"]["sft"]["mean_ood"] == pytest.approx((0.5 + 0.0 + 0.5) / 3)


def test_claims_read_every_seed_and_judge_the_paired_difference():
    """Each claim's metric, baseline, control and context are in each seed's figures, and the
    musts' figure is PPO's success minus SFT's on the seed (what the ledger judges)."""
    from stages.common.claims import evaluate, load_claims
    from stages.common.seeds import per_seed_metrics
    from tests.helpers import REPO, assert_claims_read_every_seed

    metrics = per_seed_metrics({0: summarise(_success(np.zeros(4, int))), 1: summarise(_success(np.array([1, 0, 0, 0])))})
    assert_claims_read_every_seed("rl_vla", metrics, [0, 1])
    rows = {r["id"]: r for r in evaluate(load_claims(REPO / "stages/rl_vla/claims.yaml"), metrics, [0, 1])}
    assert rows["ppo_beats_sft_semantic"]["mean"] == pytest.approx((1.0 + 0.75) / 2)
