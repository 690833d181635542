"""M1: beam search of width 1 is greedy; the key/value cache gives the teacher-forced logits;
checkpoints round-trip through torch.load(weights_only=True); bad beam widths error."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.autoopt.m1.model import M1, M1Config, load_checkpoint
from stages.autoopt.m1.train import model_config, save_checkpoint, train_model
from stages.autoopt.tokenizer import Vocab

CFG = M1Config(vocab_size=20, height=32, width=96, channels=(8, 16), d_model=32, heads=2,
               layers=2, ff=64, dropout=0.0, max_len=40)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = M1(CFG)
    m.eval()
    return m


def test_beam_width_one_equals_greedy(model):
    torch.manual_seed(1)
    for _ in range(5):
        x = torch.rand(1, 1, CFG.height, CFG.width)
        assert model.beam(x, 1, 2, 30, width=1) == model.greedy(x, 1, 2, 30)[0]


def test_wider_beam_scores_at_least_greedy(model):
    """Beam search keeps the greedy path among its candidates, so (length penalty 0) the
    summed log-probability of its answer is >= greedy's."""
    def logprob(x, seq):
        toks = torch.tensor([[1] + seq + [2]])
        lp = torch.log_softmax(model(x, toks), -1)[0]
        return float(lp[torch.arange(len(seq) + 1), toks[0, 1:]].sum())

    torch.manual_seed(2)
    for _ in range(3):
        x = torch.rand(1, 1, CFG.height, CFG.width)
        g = model.greedy(x, 1, 2, 200)[0]
        b = model.beam(x, 1, 2, 200, width=4)
        if len(g) < CFG.max_len - 1 and len(b) < CFG.max_len - 1:
            assert logprob(x, b) >= logprob(x, g) - 1e-5


def test_cache_matches_teacher_forcing(model):
    x = torch.rand(2, 1, CFG.height, CFG.width)
    y = torch.randint(3, 20, (2, 7))
    full = model(x, y)
    mem, caches = model.memory(x), [{} for _ in model.layers]
    steps = torch.stack([model._step(y[:, t], t, mem, caches) for t in range(6)], 1)
    assert torch.allclose(full, steps, atol=1e-5)


def test_bad_beam_inputs(model):
    x = torch.rand(1, 1, CFG.height, CFG.width)
    with pytest.raises(ValueError, match="beam width must be >= 1"):
        model.beam(x, 1, 2, 10, width=0)
    with pytest.raises(ValueError, match="one image at a time"):
        model.beam(torch.rand(2, 1, CFG.height, CFG.width), 1, 2, 10, width=2)


def test_checkpoint_round_trip(tmp_path, model):
    vocab = Vocab(["<pad>", "<bos>", "<eos>", "<unk>"] + [f"t{i}" for i in range(16)])
    save_checkpoint(tmp_path / "m.pt", model, CFG, vocab, {"train_size": 3})
    m2, v2 = load_checkpoint(tmp_path / "m.pt")
    assert v2.tokens == vocab.tokens and m2.cfg == CFG
    x = torch.rand(2, 1, CFG.height, CFG.width)
    assert m2.greedy(x, 1, 2, 20) == model.greedy(x, 1, 2, 20)
    blob = torch.load(tmp_path / "m.pt", weights_only=True)      # no pickled objects inside
    assert set(blob) == {"state_dict", "config", "vocab", "extra"}


def test_training_is_repeatable_and_learns():
    """Same seed -> bit-identical losses; a tiny copy task's loss falls."""
    class TP:
        batch_size, lr, weight_decay, warmup, label_smoothing, grad_clip = 8, 3e-3, 0.0, 2, 0.0, 1.0
        bucket_pool = 2

    rng = np.random.default_rng(0)
    images = (rng.random((16, CFG.height, CFG.width)) * 255).astype(np.uint8)
    tokens = np.concatenate([np.ones((16, 1)), rng.integers(3, 20, (16, 6)), 2 * np.ones((16, 1))], 1).astype(np.int64)
    cfg = model_config(20, type("T", (), {"height": CFG.height, "width": CFG.width, "channels": [8, 16],
                                          "d_model": 32, "heads": 2, "layers": 1, "ff": 64,
                                          "dropout": 0.1, "attn_dropout": 0.1, "max_len": 40})())
    _, a = train_model(images, tokens, cfg, TP, 25, 0, "cpu", "t")
    _, b = train_model(images, tokens, cfg, TP, 25, 0, "cpu", "t")
    _, c = train_model(images, tokens, cfg, TP, 25, 1, "cpu", "t")
    assert a == b and a != c
    assert np.mean(a[-5:]) < np.mean(a[:5])


def test_bucketed_batches_cover_every_index_once_and_cut_padding():
    """Each index appears once an epoch; inside a pool the batches run short to long; padding
    (batch size x longest label, summed) is below that of plain shuffled batches."""
    from stages.autoopt.m1.training import bucketed_batches

    rng = np.random.default_rng(0)
    lengths = torch.from_numpy(rng.integers(5, 200, 203))
    plain = bucketed_batches(lengths, 8, 1, torch.Generator().manual_seed(0))
    pooled = bucketed_batches(lengths, 8, 4, torch.Generator().manual_seed(0))
    for batches in (plain, pooled):
        idx = torch.cat(batches)
        assert sorted(idx.tolist()) == list(range(203))
        assert max(len(b) for b in batches) == 8
    cost = lambda bs: sum(len(b) * int(lengths[b].max()) for b in bs)
    assert cost(pooled) < 0.8 * cost(plain)
    with pytest.raises(ValueError, match="batch_size and pool must be >= 1"):
        bucketed_batches(lengths, 0, 4, torch.Generator())


def test_sine_2d_is_the_transformer_encoding_of_row_and_column():
    """Channel 2i of the row half is sin(r / 10000^(2i/h)), 2i+1 its cos; the column half the
    same in c (h = d/2), checked by hand at a few cells."""
    import math

    from stages.autoopt.m1.model import Encoder, sine_2d

    s = sine_2d(5, 7, 8)
    assert s.shape == (5, 7, 8)
    for r, c in [(0, 0), (3, 6), (4, 1)]:
        for i in range(2):
            f = 10000 ** (-2 * i / 4)
            assert s[r, c, 2 * i] == pytest.approx(math.sin(r * f), abs=1e-6)
            assert s[r, c, 2 * i + 1] == pytest.approx(math.cos(r * f), abs=1e-6)
            assert s[r, c, 4 + 2 * i] == pytest.approx(math.sin(c * f), abs=1e-6)
            assert s[r, c, 4 + 2 * i + 1] == pytest.approx(math.cos(c * f), abs=1e-6)
    # the encoder's grid is (H/16) x (W/16) with four blocks: 80 x 400 -> 5 x 25
    cfg = M1Config(vocab_size=10, height=80, width=400)
    assert Encoder.grid(cfg) == (5, 25)
    assert Encoder(cfg)(torch.zeros(1, 1, 80, 400)).shape == (1, 125, cfg.d_model)


def test_authors_bleu_is_their_sentence_bleu_on_their_tokens():
    """The AutoOpt authors' BLEU: nltk sentence BLEU with smoothing method4 on their regex tokens,
    averaged over images (x 100 here); a perfect reading scores 100, an unrelated one near 0, and
    the mean is over images (not a corpus BLEU)."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    from stages.autoopt.m1.metrics import authors_bleu, authors_tokens

    assert authors_tokens(r"\min_{x} 3x_1 + 2.5 \le 10") == ["\\min", "_", "{", "x", "}", "3", "x", "_", "1", "+",
                                                              "2", "5", "\\le", "10"]
    ref, hyp = r"\max 3x + 4y \le 12", r"\max 3x + 4z \le 12"
    one = sentence_bleu([authors_tokens(ref)], authors_tokens(hyp), smoothing_function=SmoothingFunction().method4)
    assert authors_bleu([hyp, ref], [ref, ref]) == pytest.approx(100 * (one + 1.0) / 2)
    assert authors_bleu([r"\sum_i a_i"], [ref]) < 5
    with pytest.raises(ValueError, match="2 predictions for 1"):
        authors_bleu([ref, ref], [ref])
