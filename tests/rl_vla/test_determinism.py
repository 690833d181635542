"""rl_vla end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = tuple(f"data/rl_vla/models/{seed}/{m}/MLmodel" for seed in (0, 1)
                 for m in ("sft", "ppo", "sft_more", "grpo", "dpo"))


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("rl_vla", volatile=VOLATILE)
    m = out["metrics"]
    assert sorted(m["per_seed"]) == ["0", "1"]
    for seed in m["per_seed"].values():
        for key in ("semantic", "execution", "visual"):
            assert -1 <= seed["ppo_minus_sft"][key] <= 1 and -1 <= seed["sft_more_minus_sft"][key] <= 1
        assert seed["ppo_minus_grpo"]["train"] is not None and seed["ppo_minus_dpo"]["train"] is not None
    from PIL import Image

    with Image.open(out["root"] / "reports/rl_vla/rollout.gif") as gif:    # an animation, not a still
        assert gif.format == "GIF" and gif.n_frames >= 2


def test_rollouts_are_seeded():
    """The same policy and seeds give the same successes and actions (sampled, with one generator seed)."""
    import numpy as np
    import torch

    from stages.rl_vla.env import PickPlaceEnv
    from stages.rl_vla.methods import rollout
    from stages.rl_vla.policy import make_policy

    torch.manual_seed(0)
    env = PickPlaceEnv()
    pol = make_policy(env.observation_space, env.action_space, cell=6, channels=4, features=8)
    kw = {"grid": 6, "cell": 6, "max_steps": 10}
    a = rollout(pol, "execution", [1, 2, 3], kw, temperature=1.0, gen=torch.Generator().manual_seed(3), record=True)
    b = rollout(pol, "execution", [1, 2, 3], kw, temperature=1.0, gen=torch.Generator().manual_seed(3), record=True)
    assert np.array_equal(a["action"], b["action"]) and np.array_equal(a["success"], b["success"])
