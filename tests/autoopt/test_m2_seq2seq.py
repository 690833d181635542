"""M2's learned translator: the Pyomo tokenizer round-trips every generated script (with and
without merges); the decoder is causal and ignores source padding; cached greedy decoding agrees
with teacher forcing; a tiny model overfits 4 pairs to exact greedy output; checkpoints
round-trip; bad params name their key; the m2-train stage at smoke size is deterministic."""
from __future__ import annotations


import pytest
import torch

from stages.autoopt.data import grammar
from stages.autoopt.m2.docstring import strip_docstring
from stages.autoopt.m2.seq2seq import (
    JOIN, M2, NL, M2Config, apply_merges, build_vocab, learn_merges, load_checkpoint, py_detokenize,
    py_tokenize, save_checkpoint, split_merged, target_tokens, translate, translate_tokens)

from .conftest import GEN, REPO


@pytest.fixture(scope="module")
def problems():
    """A few hundred generated formulations of every type and complexity (high-dimensional too)."""
    out = []
    for seed in range(300):
        kw = dict(GEN, complexity_rate=0.5 if seed % 2 else 0.35, inline_share=0.5)
        out.append(grammar.generate(10_000 + seed, **kw))
    return out


# --------------------------------------------------------------------------- tokens
def test_round_trip_on_generated_scripts(problems):
    scripts = [p.pyomo() for p in problems]
    for s in scripts:
        assert py_detokenize(py_tokenize(s)) == strip_docstring(s, quote_lines=True)
    merges = learn_merges([py_tokenize(s) for s in scripts[:150]], 60)
    assert len(merges) == 60
    for s in scripts:                                  # merges learned on half, applied to all
        toks = target_tokens(s, merges)
        assert split_merged(toks) == py_tokenize(s)
        assert py_detokenize(toks) == strip_docstring(s, quote_lines=True)
    base = sum(len(py_tokenize(s)) for s in scripts)
    merged = sum(len(target_tokens(s, merges)) for s in scripts)
    assert merged < 0.7 * base


def test_round_trip_builds_the_same_model(problems):
    """The detokenized text (frame re-added, docstring gone) builds a model with the same values."""
    import random

    from stages.autoopt.data.grammar import build_model, pyomo_values

    rng = random.Random(0)
    for p in problems[:25]:
        ref, back = build_model(p.pyomo()), build_model(py_detokenize(py_tokenize(p.pyomo())))
        env = grammar.random_point(p, rng)
        assert pyomo_values(back, env) == pyomo_values(ref, env)


def test_tokens_and_spacing_of_a_known_line():
    script = ("from pyomo.environ import *\n\n\ndef build_model():\n    \"\"\"single problem.\"\"\"\n"
              "    m = ConcreteModel()\n"
              "    m.c1 = Constraint(expr=Expr_if(IF=m.x[1] <= -2, THEN=(- (3)), ELSE=(m.x[12])**2) >= -10)\n"
              "    return m\n")
    toks = py_tokenize(script)
    assert toks[:8] == ["m", ".", "c1", "=", "Constraint", "(", "expr", "="]
    assert "m.x[" in toks and "**" in toks and "<=" in toks and NL not in toks
    assert toks.count("1") == 3 and toks.count("-") == 3         # digits one by one: 1, 12, 10
    assert py_detokenize(toks) == strip_docstring(script, quote_lines=True)
    assert py_detokenize(toks).startswith("from pyomo.environ import *\n\n\ndef build_model():\n    m = ConcreteModel()\n")


def test_learn_merges_by_hand():
    seqs = [["a", "b", "c", NL, "a", "b"], ["a", "b", "1", "c"], ["1", "2", "1", "2"]]
    merges = learn_merges(seqs, 5)
    assert merges[0] == ("a", "b")                      # 4 times, across a line break too
    assert all(not any(ch.isdigit() for ch in a + b) for a, b in merges)     # digits never merge
    assert ("b", NL) not in merges and (NL, "a") not in merges              # never across lines
    assert apply_merges(["a", "b", "c"], merges)[0] == "a" + JOIN + "b"
    with pytest.raises(ValueError, match="n_merges must be >= 0"):
        learn_merges(seqs, -1)


def test_bad_script_is_an_error():
    with pytest.raises(ValueError, match="not a body line indented four spaces"):
        py_tokenize("def build_model():\nm = 1\n")
    with pytest.raises(TypeError, match="needs a str"):
        py_tokenize(b"x")


# --------------------------------------------------------------------------- model
CFG = M2Config(src_vocab=30, tgt_vocab=25, d_model=32, heads=4, enc_layers=1, dec_layers=2, ff=64,
               dropout=0.0, max_src_len=40, max_tgt_len=40)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return M2(CFG).eval()


def test_shapes(model):
    src, tgt = torch.randint(4, 30, (3, 11)), torch.randint(4, 25, (3, 9))
    assert model(src, tgt).shape == (3, 8, 25)


def test_decoder_is_causal(model):
    """Changing a later target token leaves the logits of every earlier position unchanged."""
    src = torch.randint(4, 30, (2, 10))
    tgt = torch.randint(4, 25, (2, 12))
    a = model(src, tgt)
    for j in (3, 7, 10):
        changed = tgt.clone()
        changed[:, j] = (changed[:, j] + 1 - 4) % 21 + 4
        b = model(src, changed)
        assert torch.allclose(a[:, :j], b[:, :j], atol=1e-6)        # logits for positions < j
        assert not torch.allclose(a[:, j:], b[:, j:], atol=1e-6)


def test_source_padding_is_ignored(model):
    src = torch.randint(4, 30, (1, 8))
    padded = torch.cat([src, torch.zeros(1, 5, dtype=torch.long)], 1)
    tgt = torch.randint(4, 25, (1, 7))
    assert torch.allclose(model(src, tgt), model(padded, tgt), atol=1e-5)


def test_cached_greedy_agrees_with_teacher_forcing(model):
    src = torch.randint(4, 30, (4, 9))
    seqs = model.greedy(src, 1, 2, 20)
    for k, seq in enumerate(seqs):
        full = torch.tensor([[1] + seq])
        pred = model(src[k:k + 1], torch.cat([full, torch.zeros(1, 1, dtype=torch.long)], 1)).argmax(-1)[0]
        assert pred[:len(seq)].tolist() == seq


# --------------------------------------------------------------------------- training, checkpoint, API
class TP:
    batch_size, bucket_pool, lr, weight_decay, warmup, label_smoothing, grad_clip = 4, 1, 3e-3, 0.0, 20, 0.0, 1.0
    steps, eval_every = 300, 100


def _tiny(problems, n=4, merges=10):
    from stages.autoopt.m2.train import encode_pairs

    rows = [p for p in problems if p.n <= 3][:n]
    latex, scripts = [p.latex() for p in rows], [p.pyomo() for p in rows]
    vocab = build_vocab(latex, scripts, merges)
    cfg = M2Config(src_vocab=len(vocab.src), tgt_vocab=len(vocab.tgt), d_model=64, heads=4, enc_layers=1,
                   dec_layers=1, ff=128, dropout=0.0, max_src_len=256, max_tgt_len=256)
    x, y, _ = encode_pairs(latex, scripts, vocab, cfg)
    return latex, scripts, vocab, cfg, x, y


@pytest.fixture(scope="module")
def trained(problems):
    from stages.autoopt.m2.train import train_model

    latex, scripts, vocab, cfg, x, y = _tiny(problems)
    reports = []
    model, losses = train_model(x, y, cfg, TP, 0, "cpu", lambda step, m: reports.append(step), "test")
    return model, vocab, latex, scripts, losses, reports


def test_tiny_model_overfits_four_pairs(trained):
    model, vocab, latex, scripts, losses, reports = trained
    assert reports == [100, 200, 300]
    assert losses[-1] < 0.05 * losses[0]
    out = translate(model, vocab, latex, "cpu", batch=3)            # two batches, order restored
    assert out == [strip_docstring(s, quote_lines=True) for s in scripts]


def test_training_is_repeatable(problems):
    from stages.autoopt.m2.train import train_model

    class Short(TP):
        steps = 5

    _, _, _, cfg, x, y = _tiny(problems)
    a = train_model(x, y, cfg, Short, 3, "cpu")[1]
    b = train_model(x, y, cfg, Short, 3, "cpu")[1]
    assert a == b


def test_checkpoint_round_trip(tmp_path, trained):
    model, vocab, latex, *_ = trained
    save_checkpoint(tmp_path / "m.pt", model, vocab, {"steps": 300})
    m2, v2 = load_checkpoint(tmp_path / "m.pt")
    assert v2 == vocab and m2.cfg == model.cfg
    assert translate_tokens(m2, v2, latex, "cpu") == translate_tokens(model, vocab, latex, "cpu")
    blob = torch.load(tmp_path / "m.pt", weights_only=True)         # no pickled objects inside
    assert set(blob) == {"state_dict", "config", "src_vocab", "tgt_vocab", "merges", "extra"}


def test_translate_bad_arguments(model):
    from stages.autoopt.m2.seq2seq import M2Vocab
    from stages.autoopt.tokenizer import Vocab

    v = M2Vocab(Vocab(), Vocab())
    with pytest.raises(ValueError, match="batch must be >= 1"):
        translate(model, v, ["x"], "cpu", batch=0)
    with pytest.raises(ValueError, match="max_len must be >= 2"):
        translate(model, v, ["x"], "cpu", max_len=1)


# --------------------------------------------------------------------------- params, stage
def test_bad_params_name_the_key():
    from tests.helpers import params_error

    from stages.autoopt.params import AutoOptParams

    from stages.common.runtime.params import read_params

    data = read_params(REPO, ["autoopt"])
    data["autoopt"]["default"]["m2_train"].update(d_model=64, heads=3)
    msg = params_error("autoopt", AutoOptParams, data)
    assert "autoopt.default.m2_train" in msg and "d_model (64) must be a multiple of heads (3)" in msg
    data = read_params(REPO, ["autoopt"])
    data["autoopt"]["smoke"]["m2_train"]["merges"] = -1
    msg = params_error("autoopt", AutoOptParams, data)
    assert "m2_train.merges" in msg
    data = read_params(REPO, ["autoopt"])
    data["autoopt"]["smoke"]["m2_train"]["eval_every"] = 0
    assert "m2_train.eval_every" in params_error("autoopt", AutoOptParams, data)
