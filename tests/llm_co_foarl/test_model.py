"""The model and the FOARL step: the entity states read from the text, cached decoding against
full decoding, group-relative advantages, the KL term, determinism, and no feasibility mask in
decoding."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from stages.llm_co_foarl import core  # noqa: E402
from stages.llm_co_foarl import problems as P  # noqa: E402
from stages.llm_co_foarl.model import entity_tables, generate, grpo_loss, seq_logprobs  # noqa: E402

CFG = SimpleNamespace(d_model=16, heads=2, enc_layers=1, dec_layers=1, entities=True, pointer=True)
PLAIN = SimpleNamespace(d_model=16, heads=2, enc_layers=1, dec_layers=1)


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


def policy_and_ref():
    """A fresh model, a frozen copy as the reference, and one knapsack prompt."""
    torch.manual_seed(0)
    model = core.make_model(CFG)
    ref = core.make_model(CFG)
    ref.load_state_dict(model.state_dict())
    return model, ref, core.pad([core.describe("kp", tiny_data()["kp"][0])])


def test_equal_rewards_give_no_gradient_at_the_reference():
    model, ref, src = policy_and_ref()
    seq = generate(model, src, 7, greedy=False, generator=torch.Generator().manual_seed(0), repeat=4)
    loss, kl = grpo_loss(model, ref, src, seq, torch.ones(4), group=4, beta=0.05)
    loss.backward()
    assert kl == pytest.approx(0.0, abs=1e-7)
    assert max(float(p.grad.abs().max()) for p in model.parameters() if p.grad is not None) < 1e-6


def test_a_grpo_step_raises_the_better_sample():
    model, ref, src = policy_and_ref()
    seq = torch.tensor([[0, P.EOS], [1, P.EOS]])
    before = seq_logprobs(model, src, seq, 2)[0].sum(1)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    loss, _ = grpo_loss(model, ref, src, seq, torch.tensor([2.0, 0.2]), group=2, beta=0.05)
    loss.backward()
    opt.step()
    after = seq_logprobs(model, src, seq, 2)[0].sum(1)
    assert after[0] > before[0] and after[1] < before[1]


def test_decoding_has_no_feasibility_mask():
    """An untrained model writes infeasible solutions, and they are judged as written."""
    torch.manual_seed(0)
    model = core.make_model(CFG)
    rows = tiny_data()["tsp"]
    out = core.evaluate(model, rows * 8, "tsp", 5, samples=4, seed=0)
    assert out["greedy"]["feasible_rate"] < 1.0 and out["greedy"]["gap_all"] > 0.0


def test_the_entities_are_read_from_the_punctuation():
    """A city's and an item's seven tokens (label ( x , y ) ;) are its slots, its label its first
    token; a shorter row's missing entity points one past the end and has the PAD label."""
    pts = np.array([[12, 87], [40, 3], [7, 7]])
    items = np.array([[5, 9], [3, 4]])
    tsp, kp = P.describe_tsp(pts), P.describe_kp(items, 4)
    src = core.pad([tsp, kp])
    member, slots, labels = entity_tables(src)
    assert labels.tolist() == [[0, 1, 2], [0, 1, P.PAD]]
    assert slots[0, 1].tolist() == list(range(11, 18))
    assert P.detokenize([tsp[i] for i in slots[0, 1]]) == "1 ( 40 , 3 ) ;"
    assert P.detokenize([kp[i] for i in slots[1, 0]]) == "0 ( 5 , 9 ) ;"
    assert slots[1, 2].tolist() == [src.shape[1]] * 7 and member[1, 2].sum() == 0
    assert member[0].sum(1).tolist() == [7, 7, 7] and member[0, :, :4].sum() == 0     # the header is no entity


def test_the_pointer_term_needs_the_entity_states():
    with pytest.raises(ValueError, match="needs the entity states"):
        core.make_model(SimpleNamespace(d_model=16, heads=2, enc_layers=1, dec_layers=1, pointer=True))


def test_the_pointer_term_moves_a_labels_logit_only():
    """With the pointer weights zeroed the logits are the vocabulary head's; with them set, only
    the label tokens' logits change (no other token, no mask)."""
    torch.manual_seed(4)
    model = core.make_model(CFG).eval()
    src = core.pad([core.describe("tsp", tiny_data()["tsp"][0])])
    tgt = torch.tensor([[P.SOL, 0, 3]])
    with torch.no_grad():
        with_ptr = model(src, tgt)
        model.ptr.weight.zero_()
        without = model(src, tgt)
    moved = (with_ptr - without).abs().amax((0, 1)) > 0
    assert moved[:5].all() and not moved[5:].any()          # tiny_data's TSP has 5 nodes: labels 0-4


@pytest.mark.parametrize("cfg", [CFG, PLAIN], ids=["entities_pointer", "plain"])
def test_cached_decoding_equals_full_decoding(cfg):
    """One new position a step with the earlier keys and values kept gives the logits of decoding
    the whole prefix again (to rounding) and the same tokens, greedy and sampled."""
    torch.manual_seed(1)
    model = core.make_model(cfg).eval()
    rng = np.random.default_rng(2)
    src = core.pad([P.describe_tsp(P.random_tsp(rng, 6)) for _ in range(3)] +
                   [P.describe_kp(*P.random_kp(rng, 5)) for _ in range(2)])
    with torch.no_grad():
        mem, pad, ents = model.encode(src)
        prefix = torch.tensor([[P.SOL, 3, 1, 4, 0]] * 5)
        full = model.decode(prefix, mem, pad, ents)
        caches = [{} for _ in model.dec]
        steps = [model.decode_step(prefix[:, i:i + 1], i, mem, pad, ents, caches) for i in range(prefix.shape[1])]
    assert torch.allclose(torch.stack(steps, 1), full, atol=1e-5)
    cached = [generate(model, src, 8, greedy=g, generator=torch.Generator().manual_seed(5), repeat=2)
              for g in (True, False)]
    model.can_cache = lambda: False
    again = [generate(model, src, 8, greedy=g, generator=torch.Generator().manual_seed(5), repeat=2)
             for g in (True, False)]
    assert all(torch.equal(a, b) for a, b in zip(cached, again))


def test_a_repeated_prompt_is_encoded_once_with_the_same_logits():
    torch.manual_seed(3)
    model = core.make_model(CFG).eval()
    src = core.pad([core.describe("tsp", tiny_data()["tsp"][0]), core.describe("kp", tiny_data()["kp"][0])])
    seq = torch.tensor([[0, 1, P.EOS], [2, P.EOS, P.PAD], [0, P.EOS, P.PAD], [1, 2, P.EOS]])
    with torch.no_grad():
        once = model(src, seq, repeat=2)
        each = model(src.repeat_interleave(2, 0), seq)
    assert torch.allclose(once, each, atol=1e-5)


def test_the_mlflow_model_carries_its_signature_and_example_and_solves_as_solve_rows(tmp_path):
    """The pyfunc (pyfunc.py) with store.example_frame's rows (a TSP and a knapsack instance in one
    frame) as its example and store.signature: loaded back, it answers what solve_rows answers."""
    import json

    import mlflow.pyfunc
    import torch
    from mlflow.models import Model

    from stages.llm_co_foarl import store

    cfg = {"d_model": 16, "heads": 2, "enc_layers": 1, "dec_layers": 1, "entities": True, "pointer": True}
    torch.manual_seed(0)
    model = store.build(cfg).eval()
    torch.save(model.state_dict(), tmp_path / "foarl.pt")
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    data = {"tsp": {"test": [{"pts": [[1, 2], [50, 60], [90, 10], [30, 30]], "opt": 1.0}]},
            "kp": {"test": [{"items": [[10, 5], [20, 9], [7, 3]], "cap": 25, "chosen": [0], "opt": 5.0}]}}
    example = store.example_frame(data)
    store.save_mlflow(tmp_path / "m", tmp_path / "foarl.pt", tmp_path / "config.json", example)
    meta = Model.load(str(tmp_path / "m"))
    assert meta.signature.inputs.input_names() == ["problem", "instance"] and meta.signature.outputs is not None
    saved = meta.load_input_example(str(tmp_path / "m"))
    assert saved.to_dict("records") == example.to_dict("records")
    got = mlflow.pyfunc.load_model(str(tmp_path / "m")).predict(saved)
    assert got == store.solve_rows(model, example.to_dict("records"))
    with pytest.raises(Exception, match="instance"):
        mlflow.pyfunc.load_model(str(tmp_path / "m")).predict(example[["problem"]])
