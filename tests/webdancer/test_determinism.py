"""webdancer end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = tuple(f"data/webdancer/models/{s}/{m}/MLmodel" for s in (0, 1)
                 for m in ("sft", "sft_rl", "rl_scratch", "sft_rl_coin", "sft_equal"))


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("webdancer", volatile=VOLATILE)
    m = out["metrics"]
    assert sorted(m["per_seed"]) == ["0", "1"]
    for key in ("rl_gain", "equal_sft_gain", "rl_over_equal_sft", "coin_gain", "cold_start_gain"):
        assert -1 <= m[key]["mean"] <= 1
    assert -2 <= m["rl_gain_deep_minus_shallow"] <= 2
    assert (out["root"] / "reports/webdancer/pass_by_depth.png").stat().st_size > 5_000


def test_rollouts_are_seeded():
    """The same policy, questions and generator seed give the same sampled actions and rewards."""
    import numpy as np
    import torch

    from stages.webdancer import agent
    from stages.webdancer.web import Layout, make_questions, make_sites

    lay = Layout(3, 2, 6, 4)
    rng = np.random.default_rng(0)
    sites = make_sites(lay, 5, rng)
    q = make_questions(lay, sites, np.arange(5), np.array([1, 2, 1, 2, 2]), rng)
    torch.manual_seed(0)
    pol = agent.make_policy(lay, 8, 1, 2)
    a = agent.rollout(pol, lay, sites, q, np.arange(5), 6, torch.Generator().manual_seed(3))
    b = agent.rollout(pol, lay, sites, q, np.arange(5), 6, torch.Generator().manual_seed(3))
    assert torch.equal(a["act"], b["act"]) and np.array_equal(a["reward"], b["reward"])
