"""Seeds as an axis (docs/VERDICTS.md, section 1): a seed's figures depend on that seed alone, the
metrics layout the ledger reads, the equal-data SFT arm's data, and the must judged with its control."""
from __future__ import annotations

import numpy as np
import pytest

from stages.common.claims import evaluate, load_claims
from stages.common.runtime.params import load_study
from stages.common.seeds import per_seed_metrics, run_seeds
from stages.webdancer.params import PARAMS
from tests.helpers import assert_claims_read_every_seed

SEEDS = [1000, 1001]                     # calibration seeds (any seed would do in a test)


@pytest.fixture(scope="module")
def smoke(real_params):
    _, p = load_study("webdancer", PARAMS, real_params, profile="smoke")
    return p


def _seed(p, seed):
    from stages.webdancer.agent import split_data, state_bytes
    from stages.webdancer.evaluate import seed_metrics
    from stages.webdancer.prepare import build
    from stages.webdancer.train import train_seed
    from stages.webdancer.web import Layout

    lay = Layout(p.env.k, p.env.depth, p.env.n_topics, p.env.n_values)
    data = build(p.env, p.prepare, seed)
    data.pop("_info")
    sites, qs, traj = split_data(data)
    pols, _, _ = train_seed(lay, p.env, p.train, sites, qs, traj, seed)
    m, _ = seed_metrics(lay, p.env, p.evaluate.level, sites, qs["test"], pols, seed)
    return m, {k: state_bytes(v) for k, v in pols.items()}, traj


@pytest.fixture(scope="module")
def two_seeds(smoke):
    return run_seeds(SEEDS, lambda s: _seed(smoke, s))


def test_a_seeds_figures_depend_on_that_seed_alone(smoke, two_seeds):
    """Seed 1001 run alone (after other draws from the global generators) gets the weights and
    figures it got after seed 1000 in the same process; seed 1000's differ."""
    import torch

    np.random.random(7)
    torch.rand(3)
    m, w, _ = _seed(smoke, SEEDS[1])
    m_both, w_both, _ = two_seeds[SEEDS[1]]
    assert w == w_both and m == m_both
    assert w_both["sft_rl"] != two_seeds[SEEDS[0]][1]["sft_rl"]


def test_equal_data_arm_holds_the_cold_start_and_the_rl_questions(two_seeds):
    """The control's SFT data are the cold start's steps followed by those sampled on the RL
    questions (more of them: the smoke profile has as many RL as SFT questions)."""
    _, _, traj = two_seeds[SEEDS[0]]
    n = len(traj["act"])
    assert np.array_equal(traj["eq_obs"][:n], traj["obs"]) and np.array_equal(traj["eq_act"][:n], traj["act"])
    assert len(traj["eq_act"]) > 1.5 * n


def _metrics(two_seeds):
    return per_seed_metrics({s: r[0] for s, r in two_seeds.items()})


def test_the_ledger_finds_every_claims_figures_per_seed(two_seeds):
    m = _metrics(two_seeds)
    assert sorted(m["per_seed"]) == ["1000", "1001"] and m["seeds"] == SEEDS
    assert_claims_read_every_seed("webdancer", m, SEEDS)


def test_must_with_a_passing_control_is_not_specific(two_seeds):
    """Planted figures: RL and the equal-data SFT arm both +0.3 over SFT on both seeds -> the must
    reads `not specific`; with the control at 0 it holds."""
    from pathlib import Path

    cf = load_claims(Path(__file__).resolve().parents[2] / "stages/webdancer/claims.yaml")
    m = _metrics(two_seeds)

    def verdict(rl, ctl):
        for i, s in enumerate(SEEDS):
            m["per_seed"][str(s)]["rl_gain"]["mean"] = rl[i]
            m["per_seed"][str(s)]["equal_sft_gain"]["mean"] = ctl[i]
        return {r["id"]: r for r in evaluate(cf, m)}["rl_beats_sft"]["verdict"]

    assert verdict([0.30, 0.31], [0.30, 0.29]) == "not specific"
    assert verdict([0.30, 0.31], [0.00, 0.01]) == "holds"
    assert verdict([0.00, 0.01], [0.00, 0.01]) == "fails"
