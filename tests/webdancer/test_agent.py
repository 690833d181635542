"""webdancer's agent: the link pointer, SFT on a tiny case, RL on a known case (the shared core
from stages/common/pg.py drives a policy towards the rewarded answer), the random agent's rate."""
from __future__ import annotations

import numpy as np
import torch

from stages.webdancer import agent
from stages.webdancer.web import Layout, make_questions, make_sites


def test_click_logits_follow_their_link_token():
    """Swapping two link tokens swaps their click logits (the pointer reads each link's own state)."""
    lay = Layout(3, 2, 6, 4)
    torch.manual_seed(0)
    pol = agent.make_policy(lay, 16, 1, 2)
    obs = torch.tensor([[1, 2, 0, 0, 3, 4, 5, lay.value0]])
    sw = obs.clone()
    sw[0, 4], sw[0, 5] = obs[0, 5], obs[0, 4]
    # positions differ, so compare with position embeddings zeroed
    with torch.no_grad():
        pol.pos.zero_()
        a, b = pol(obs)[0], pol(sw)[0]
    assert torch.allclose(a[[0, 1]], b[[1, 0]], atol=1e-5) and torch.allclose(a[2], b[2], atol=1e-5)


def test_sft_fits_a_tiny_set():
    lay = Layout(3, 1, 4, 3)
    rng = np.random.default_rng(0)
    obs = rng.integers(0, lay.vocab, size=(32, lay.obs_len))
    act = rng.integers(0, lay.n_actions, size=32)
    torch.manual_seed(0)
    pol = agent.make_policy(lay, 16, 1, 2)
    losses = agent.sft(pol, obs, act, 60, 32, 0.01, torch.Generator().manual_seed(0))
    assert losses[-1] < 0.3 * losses[0]


def test_rl_learns_the_rewarded_answer_and_the_coin_reward_does_not():
    """Depth-1 sites where every fact is 0: answering 0 at once is right; RL (group advantages,
    clip-higher) must raise Pass@1 from a random start, the coin reward must not."""
    lay = Layout(2, 1, 2, 2)
    rng = np.random.default_rng(0)
    sites = make_sites(lay, 8, rng)
    sites["value"][:] = 0
    q = make_questions(lay, sites, np.arange(8), np.ones(8, dtype=np.int64), rng)

    def run(coin):
        torch.manual_seed(0)
        pol = agent.make_policy(lay, 8, 1, 2)
        agent.rl(pol, lay, sites, q, 3, 30, 8, 4, 0.02, 0.2, 0.28, 1, torch.Generator().manual_seed(0),
                 np.random.default_rng(1), reward_noise=coin)
        return agent.rollout(pol, lay, sites, q, np.arange(8), 3, None)["reward"].mean()
    assert run(False) == 1.0 and run(True) < 1.0


def test_random_agent_rate_matches_chance():
    """Depth-1 questions answered on the first step by a uniform agent: P(answer) x P(right value)."""
    lay = Layout(2, 1, 2, 4)
    rng = np.random.default_rng(0)
    sites = make_sites(lay, 1, rng)
    q = make_questions(lay, sites, np.zeros(4000, dtype=np.int64), np.ones(4000, dtype=np.int64), rng)
    r = agent.random_agent(lay, sites, q, np.arange(4000), 1, np.random.default_rng(3))
    expect = (lay.n_values / lay.n_actions) * (1 / lay.n_values)
    assert abs(r["reward"].mean() - expect) < 0.03


def test_saved_policy_loads_to_the_same_outputs(tmp_path):
    lay = Layout(3, 2, 6, 4)
    torch.manual_seed(0)
    pol = agent.make_policy(lay, 8, 1, 2)
    f = agent.save_files(pol, tmp_path)
    back = agent.load_files(f["weights"], f["config"])
    x = torch.randint(0, lay.vocab, (5, lay.obs_len))
    with torch.no_grad():
        assert torch.equal(pol(x), back(x))


def test_the_mlflow_agent_carries_its_signature_and_example_and_acts_as_the_policy(tmp_path):
    """The pyfunc (stages/webdancer/pyfunc.py) saved with observation rows as its example: MLflow
    infers its signature from them, and the loaded model's actions are the policy's argmax."""
    import mlflow.pyfunc
    import pandas as pd
    from mlflow.models import Model

    from stages.common.mlmodel import save_pyfunc

    lay = Layout(3, 2, 6, 4)
    torch.manual_seed(0)
    pol = agent.make_policy(lay, 8, 1, 2)
    (tmp_path / "files").mkdir()
    x = torch.randint(0, lay.vocab, (5, lay.obs_len))
    save_pyfunc(tmp_path / "m", "stages/webdancer/pyfunc.py", agent.save_files(pol, tmp_path / "files"),
                input_example=pd.DataFrame({"obs": x[:3].tolist()}))
    meta = Model.load(str(tmp_path / "m"))
    assert meta.signature.inputs.input_names() == ["obs"] and meta.signature.outputs is not None
    got = mlflow.pyfunc.load_model(str(tmp_path / "m")).predict(pd.DataFrame({"obs": x.tolist()}))
    with torch.no_grad():
        assert got == pol(x).argmax(1).tolist()
