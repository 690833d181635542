"""The model and the FOARL step: group-relative advantages, the KL term, determinism, and no
feasibility mask in decoding."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from stages.llm_co_foarl import core  # noqa: E402
from stages.llm_co_foarl import problems as P  # noqa: E402
from stages.llm_co_foarl.model import generate, grpo_loss, seq_logprobs  # noqa: E402

CFG = SimpleNamespace(d_model=16, heads=2, enc_layers=1, dec_layers=1)


def tiny_data(seed=0):
    rng = np.random.default_rng(seed)
    pts = P.random_tsp(rng, 5)
    tour = [0, 1, 2, 3, 4]
    items, cap = P.random_kp(rng, 5)
    return {"tsp": [{"pts": pts.tolist(), "tour": tour, "opt": P.tour_length(pts, tour)}],
            "kp": [{"items": items.tolist(), "cap": cap, "chosen": [0], "opt": float(items[0, 1])}]}


def trained(seed: int):
    torch.manual_seed(seed)
    model = core.make_model(CFG)
    core.train_sft(model, tiny_data(), 5, 4, 1e-3, np.random.default_rng(seed))
    return model


def test_sft_is_deterministic():
    a, b = trained(0), trained(0)
    for x, y in zip(a.state_dict().values(), b.state_dict().values()):
        assert torch.equal(x, y)
    src = core.pad([core.describe("tsp", tiny_data()["tsp"][0])])
    g1 = generate(a, src.repeat(4, 1), 8, greedy=False, generator=torch.Generator().manual_seed(1))
    g2 = generate(b, src.repeat(4, 1), 8, greedy=False, generator=torch.Generator().manual_seed(1))
    assert torch.equal(g1, g2)


def policy_and_ref(rows: int):
    """A fresh model, a frozen copy as the reference, and a knapsack prompt repeated ``rows`` times."""
    torch.manual_seed(0)
    model = core.make_model(CFG)
    ref = core.make_model(CFG)
    ref.load_state_dict(model.state_dict())
    return model, ref, core.pad([core.describe("kp", tiny_data()["kp"][0])]).repeat(rows, 1)


def test_equal_rewards_give_no_gradient_at_the_reference():
    model, ref, src = policy_and_ref(4)
    seq = generate(model, src, 7, greedy=False, generator=torch.Generator().manual_seed(0))
    loss, kl = grpo_loss(model, ref, src, seq, torch.ones(4), group=4, beta=0.05)
    loss.backward()
    assert kl == pytest.approx(0.0, abs=1e-7)
    assert max(float(p.grad.abs().max()) for p in model.parameters() if p.grad is not None) < 1e-6


def test_a_grpo_step_raises_the_better_sample():
    model, ref, src = policy_and_ref(2)
    seq = torch.tensor([[0, P.EOS], [1, P.EOS]])
    before = seq_logprobs(model, src, seq)[0].sum(1)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    loss, _ = grpo_loss(model, ref, src, seq, torch.tensor([2.0, 0.2]), group=2, beta=0.05)
    loss.backward()
    opt.step()
    after = seq_logprobs(model, src, seq)[0].sum(1)
    assert after[0] > before[0] and after[1] < before[1]


def test_decoding_has_no_feasibility_mask():
    """An untrained model writes infeasible solutions, and they are judged as written."""
    torch.manual_seed(0)
    model = core.make_model(CFG)
    rows = tiny_data()["tsp"]
    out = core.evaluate(model, rows * 8, "tsp", 5, samples=4, seed=0)
    assert out["greedy"]["feasible_rate"] < 1.0 and out["greedy"]["gap_all"] > 0.0
