"""M1's line design: projection-profile segmentation on images drawn by hand, greedy
CTC decoding on tiny cases, training pairs, the CRNN's training and checkpoint, bad params."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from stages.autoopt.m1.crnn import CRNN, CRNNConfig, batch_images, ctc_greedy, min_frames
from stages.autoopt.m1.line_model import join_lines, label_lines, training_pairs
from stages.autoopt.m1.lines import SegmentSpec, row_runs, segment, shear, skew_angle, to_ink
from stages.autoopt.tokenizer import Vocab

from tests.helpers import params_error


def two_lines() -> np.ndarray:
    """White 40 x 60 page, line 1 ink in rows 5..12, cols 5..50; line 2 rows 20..28, cols 8..40."""
    img = np.full((40, 60), 255, dtype=np.uint8)
    img[5:13, 5:51] = 0
    img[20:29, 8:41] = 0
    return img


def test_segment_two_lines_by_hand():
    lines = segment(two_lines(), SegmentSpec(max_skew_deg=0, margin=2))
    assert len(lines) == 2
    # rows 5..12 plus a 2-pixel margin: rows 3..14 (12 rows); cols 5..50 plus margin: 3..52 (50 cols)
    assert lines[0].shape == (12, 50) and lines[1].shape == (13, 37)
    assert lines[0][2:10, 2:48].min() == 1.0 and lines[0][:2].max() == 0.0   # ink = 1, margin empty


def test_a_narrow_band_joins_its_nearer_line():
    """An operator's limit under line 1 (rows 14..16, 4 columns wide, 1 row below it) is merged into
    line 1, not counted as a line; without the merge rule (min_width 0, min_cover 0) it would be."""
    img = two_lines()
    img[14:17, 10:14] = 0
    assert len(segment(img, SegmentSpec(max_skew_deg=0))) == 2
    assert len(segment(img, SegmentSpec(max_skew_deg=0, min_width=0, min_cover=0, min_height=1))) == 3
    assert segment(img, SegmentSpec(max_skew_deg=0, margin=0))[0].shape[0] == 12   # rows 5..16


def test_row_runs_and_skew():
    assert row_runs(np.array([0, 2, 3, 0, 0, 1, 0]), 1) == [(1, 3), (5, 6)]
    assert row_runs(np.array([0, 2, 3, 0, 0, 1, 0]), 2) == [(1, 3)]
    # a two-line page tilted by 2 degrees: its lines overlap in rows until deskewed
    img = np.full((60, 400), 255, dtype=np.uint8)
    img[10:18, 10:390] = 0
    img[26:34, 10:390] = 0
    tilted = 1.0 - shear(to_ink(img), -2.0)
    assert len(row_runs(((1 - tilted) > 0.35).sum(1), 1)) == 1
    angle = skew_angle(tilted < 0.65, 3.0, 25)
    assert angle == pytest.approx(2.0, abs=0.25)
    assert len(segment((tilted * 255).astype(np.uint8))) == 2
    assert skew_angle(to_ink(img) > 0.35, 3.0, 25) == 0.0        # an upright page is left alone


def test_segment_spec_rejects_bad_values():
    with pytest.raises(ValueError, match="threshold must be in"):
        SegmentSpec(threshold=1.5)
    with pytest.raises(ValueError, match="min_row_ink must be >= 1"):
        SegmentSpec(min_row_ink=0)
    with pytest.raises(ValueError, match="a grey image"):
        segment(np.zeros((4, 4, 3), dtype=np.uint8))


def test_ctc_greedy_collapses_repeats_then_drops_blanks():
    # frames a a _ a b b _ _ c  ->  a a b c  (a blank separates the two a's)
    assert ctc_greedy([[5, 5, 0, 5, 6, 6, 0, 0, 7]]) == [[5, 5, 6, 7]]
    assert ctc_greedy([[0, 0, 0]]) == [[]]
    assert ctc_greedy([[5, 6, 6, 7], [8, 8, 8, 9]], lengths=[3, 2]) == [[5, 6], [8]]
    assert min_frames([5, 5, 6]) == 4 and min_frames([5, 6, 7]) == 3 and min_frames([]) == 0


def test_ctc_loss_of_a_perfect_alignment_is_near_zero():
    """Log-probabilities that put all mass on the path a _ a b decode to [a, a, b] and give CTC
    loss near 0; torch's CTCLoss with blank 0 is the loss the recogniser trains with."""
    path = [5, 0, 5, 6]
    logp = torch.full((4, 1, 8), -30.0)
    for t, c in enumerate(path):
        logp[t, 0, c] = 0.0
    assert ctc_greedy(logp.argmax(-1).T.tolist()) == [[5, 5, 6]]
    loss = torch.nn.CTCLoss(blank=0)(logp, torch.tensor([[5, 5, 6]]), torch.tensor([4]), torch.tensor([3]))
    assert float(loss) < 1e-6


def test_label_lines_and_training_pairs():
    assert label_lines(r"a \\ b c \\ ") == ["a", "b c"]
    assert join_lines(["a", "b c"]) == r"a \\ b c"
    vocab = Vocab.build(["a b c x"])
    wide, narrow = np.zeros((32, 40), np.float32), np.zeros((32, 4), np.float32)
    per_image = [[wide, wide], [wide], [wide, narrow]]
    labels = [r"a b \\ c", r"a \\ b", r"x \\ a a b c"]      # 2nd: 1 line found, 2 in the label
    xs, ys, st = training_pairs(per_image, labels, vocab, subframes=1)
    assert st == {"images": 3, "images_paired": 2, "lines": 3, "too_narrow": 1}
    assert ys == [vocab.encode("a b")[1:-1], vocab.encode("c")[1:-1], vocab.encode("x")[1:-1]]


def _toy(n: int, rng):
    """Lines with 1-3 vertical bars of 3 widths; the label is the bar widths left to right."""
    xs, ys = [], []
    for _ in range(n):
        k = int(rng.integers(1, 4))
        a = np.zeros((16, 48), np.float32)
        lab = []
        for j in range(k):
            w = int(rng.integers(1, 4))
            a[3:13, 4 + 14 * j:4 + 14 * j + 2 * w] = 1.0
            lab.append(3 + w)
        xs.append(a)
        ys.append(lab)
    return xs, ys


def test_crnn_training_is_repeatable_learns_and_round_trips(tmp_path):
    from stages.autoopt.m1.line_model import recognise
    from stages.autoopt.m1.reader import load_reader
    from stages.autoopt.m1.train import save_checkpoint, train_crnn

    class TP:
        batch_size, bucket_pool, lr, weight_decay, warmup, grad_clip = 8, 2, 5e-3, 0.0, 5, 1.0

    xs, ys = _toy(48, np.random.default_rng(0))
    cfg = CRNNConfig(vocab_size=7, height=16, channels=(8, 8, 16, 16), hidden=16, rnn_layers=1,
                     subframes=1, dropout=0.0, max_width=64)
    m, a, _, _ = train_crnn(xs, ys, cfg, TP, 40, 0, "cpu", "t")
    _, b, _, _ = train_crnn(xs, ys, cfg, TP, 40, 0, "cpu", "t")
    _, c, _, _ = train_crnn(xs, ys, cfg, TP, 40, 1, "cpu", "t")
    assert a == b and a != c
    assert np.mean(a[-5:]) < 0.5 * np.mean(a[:5])
    vocab = Vocab(["<pad>", "<bos>", "<eos>", "<unk>", "p", "q", "r"])
    save_checkpoint(tmp_path / "m.pt", m, cfg, vocab, {"design": "lines"})
    r = load_reader(tmp_path / "m.pt")
    assert r.design == "lines" and r.vocab.tokens == vocab.tokens and r.model.cfg == cfg
    per_image = [[xs[0], xs[1]], [xs[2]]]
    assert recognise(r.model, vocab, per_image, "cpu") == recognise(m, vocab, per_image, "cpu")
    assert len(recognise(m, vocab, per_image, "cpu")) == 2
    with pytest.raises(ValueError, match="as many line crops as targets"):
        train_crnn(xs[:2], ys[:1], cfg, TP, 1, 0, "cpu", "t")


def test_batch_images_pads_to_a_multiple_of_four():
    x, w = batch_images([np.ones((16, 5), np.float32), np.ones((16, 9), np.float32)], 16)
    assert x.shape == (2, 1, 16, 12) and w.tolist() == [5, 9]
    assert float(x[0, 0, :, 5:].abs().sum()) == 0.0
    m = CRNN(CRNNConfig(vocab_size=7, height=16, channels=(4, 4, 4, 4), hidden=4, rnn_layers=1, subframes=2))
    assert m(x, w).shape == (2, 6, 7) and m.frames(w).tolist() == [4, 6]


def test_crnn_config_and_line_params_reject_bad_values(real_params):  # noqa: F811 - the fixture
    with pytest.raises(ValueError, match="multiple of 16"):
        CRNNConfig(vocab_size=5, height=40)
    with pytest.raises(ValueError, match="four convolution widths"):
        CRNNConfig(vocab_size=5, channels=(4, 4))
    from stages.autoopt.params import AutoOptParams

    bad = copy.deepcopy(real_params)
    bad["autoopt"]["default"]["train"]["lines"]["height"] = 40
    assert "multiple of 16" in params_error("autoopt", AutoOptParams, bad)
    bad = copy.deepcopy(real_params)
    bad["autoopt"]["default"]["train"]["design"] = "ocr"
    msg = params_error("autoopt", AutoOptParams, bad)
    assert "autoopt.default.train.design = 'ocr'" in msg and "'lines', 'page'" in msg
    bad = copy.deepcopy(real_params)
    bad["autoopt"]["smoke"]["train"]["lines"]["subframes"] = 0
    msg = params_error("autoopt", AutoOptParams, bad)
    assert "autoopt.smoke.train.lines.subframes = 0" in msg and ">= 1" in msg


def test_a_seeds_model_is_the_same_bits_whatever_the_number_of_worker_processes():
    """train_seeds forks one single-thread process per seed, ``workers`` at a time: more workers
    than cores only time-slices them, so each seed's weights must not depend on ``workers``."""
    import types

    import numpy as np
    import torch

    from stages.autoopt.m1.train import crnn_config, train_seeds

    rng = np.random.default_rng(0)
    xs = [rng.random((16, int(w))).astype(np.float32) for w in rng.integers(40, 80, 12)]
    ys = [list(rng.integers(1, 6, 3)) for _ in xs]
    lp = types.SimpleNamespace(height=16, max_width=400, channels=[4, 4, 8, 8], hidden=8, rnn_layers=1,
                               subframes=2, dropout=0.1, eval_every=0)
    tp = types.SimpleNamespace(lr=0.003, weight_decay=0.01, batch_size=4, bucket_pool=2, warmup=2,
                               grad_clip=1.0, steps=6, lines=lp)
    cfg = crnn_config(8, lp)
    kw = dict(xs=xs, ys=ys, cfg=cfg, tp=tp, device=torch.device("cpu"), validate=None, threads=1)
    alone = train_seeds([3, 4, 5], 1, **kw)
    pooled = train_seeds([3, 4, 5], 3, **kw)
    for s in (3, 4, 5):
        assert alone[s][1] == pooled[s][1]                                   # losses, step by step
        for k, v in alone[s][0].items():
            assert torch.equal(v, pooled[s][0][k]), (s, k)
    assert alone[3][1] != alone[4][1]                                        # the seeds differ
