"""bitmark over the verdict seeds: each seed's split and figures depend on that seed alone, the
fine-tuned pair differs only in the watermark, the detection control (another key) does not see
the watermark, and every claim reads each seed's figures."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")      # imported before the fixture caps its threads

from stages.bitmark import ar, wm  # noqa: E402
from stages.bitmark.data import seed_split  # noqa: E402
from stages.bitmark.params import PARAMS  # noqa: E402
from stages.bitmark.prepare import shipped_digits, stratified_split  # noqa: E402
from stages.common.seeds import per_seed_metrics, rng  # noqa: E402

TINY = {
    "prepare": {"test_fraction": 0.2},
    "watermark": {"ngram": 2, "key": 20250, "delta": 2.0},
    "train": {"hidden": 8, "layers": 1, "steps": 20, "batch": 32, "lr": 0.01, "weight_decay": 0.0,
              "finetune_wm": 20, "finetune_real": 20, "finetune_steps": 10, "finetune_lr": 0.01},
    "evaluate": {"n_samples": 20, "classifier_hidden": 8, "classifier_iters": 50, "fpr": 0.1, "token_delta_matched": 4.0, "null_sims": 100},
}


def tiny_params():
    """Tiny sizes, with the default profile's delta sweep and attack strengths (the figures the
    claims read)."""
    import json
    from pathlib import Path

    default = json.loads((Path(__file__).resolve().parents[2] / "stages/bitmark/params.json").read_text())
    ev = default["bitmark"]["default"]["evaluate"]
    grids = {k: ev[k] for k in ("deltas", "bitflip", "noise", "blur")}
    return PARAMS.model_validate({**TINY, "evaluate": {**TINY["evaluate"], **grids}})


def digits(seeds):
    """What the prepare stage writes for ``seeds`` (data/bitmark/digits.npz's arrays)."""
    x, y = shipped_digits()
    q = wm.quantise(x)
    d = {"pixels": q.astype(np.int8), "labels": y.astype(np.int8)}
    for s in seeds:
        d[f"test_idx_{s}"] = stratified_split(y, 0.2, rng(s, 0))[1].astype(np.int16)
    return d


def run(seed: int, d, p):
    from stages.bitmark.evaluate import evaluate_seed
    from stages.bitmark.train import train_seed

    split = seed_split(d, seed)
    r = train_seed(seed, *split, p.train, p.watermark, progress=False)
    ev = evaluate_seed(seed, split, r["models"], p.evaluate, p.watermark, progress=False)
    return {**ev["metrics"], "train": r["metrics"]}


@pytest.fixture(scope="module")
def two_seeds():
    """Seeds 0 and 1 run one after another in one process (as the stages run them), and seed 1 alone."""
    p, d = tiny_params(), digits([0, 1])
    both = {s: run(s, d, p) for s in (0, 1)}
    return both, run(1, d, p)


def test_split_per_seed_is_the_seeds_own_and_complete():
    d = digits([0, 1])
    xtr0, ytr0, xte0, yte0 = seed_split(d, 0)
    xte1 = seed_split(d, 1)[2]
    assert len(xtr0) + len(xte0) == 1797 and len(xte0) == len(xte1)
    assert not np.array_equal(xte0, xte1)                               # each seed its own split
    assert (np.bincount(yte0) >= 35).all()                              # stratified: every class held out
    with pytest.raises(KeyError, match="no split for seed 7"):
        seed_split(d, 7)


def test_a_seeds_figures_depend_on_that_seed_only(two_seeds):
    both, alone = two_seeds
    assert both[1] == alone                                             # seed 0 ran first: no effect on seed 1
    assert both[0]["radioactivity"] != both[1]["radioactivity"]         # and the seeds differ


def test_fine_tuned_pair_differs_only_in_the_watermark():
    """The radioactive and control fine-tunes share the real digits and the batches: on a
    fine-tuning set that is the same for both, they give the same weights; the sets differ only in
    the generated half (BitMark samples vs unwatermarked ones, as many, same classes)."""
    from stages.bitmark.train import finetune, finetune_sets

    p = tiny_params()
    xtr, ytr, _, _ = seed_split(digits([3]), 3)
    clean = ar.build(p.train.hidden, 1, 3)
    table = wm.green_table(p.watermark.key, p.watermark.ngram)
    sets = finetune_sets(clean, xtr, ytr, p.train, p.watermark, 3, table, progress=False)
    (rb, rl), (cb, cl) = sets["radioactive"], sets["control"]
    n = p.train.finetune_wm
    assert np.array_equal(rl, cl) and np.array_equal(rb[n:], cb[n:]) and not np.array_equal(rb[:n], cb[:n])
    a, _ = finetune(clean, cb, cl, p.train, 3, progress=False)
    b, _ = finetune(clean, cb, cl, p.train, 3, progress=False)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert any(not torch.equal(x, y) for x, y in zip(a.state_dict().values(), clean.state_dict().values()))


def test_another_keys_detector_does_not_see_the_watermark():
    """On a model with every logit 0, BitMark samples are green under their key with probability
    sigmoid(delta) per bit (z far above 10). Under another key each (position, context) agrees with
    the marking key's green bit by a coin toss, so that key's z has a random offset whose mean over
    keys is 0 (its sd is under 1 a key): averaged over 40 other keys it is near 0."""
    m = ar.build(4, 1, 0)
    with torch.no_grad():
        for prm in m.parameters():
            prm.zero_()
    table = wm.green_table(20250, 2)
    bits = ar.sample(m, np.arange(200) % 10, 1, table, 2, 2.0)
    assert wm.z_scores(bits, table, 2).mean() > 10
    others = [wm.z_scores(bits, wm.green_table(20251 + k, 2), 2).mean() for k in range(40)]
    assert abs(np.mean(others)) < 0.4 and max(np.abs(others)) < 4


def test_every_claim_reads_each_seeds_figures(two_seeds):
    from tests.helpers import assert_claims_read_every_seed

    both, _ = two_seeds
    evaluated = {s: {k: v for k, v in m.items() if k != "train"} for s, m in both.items()}  # metrics.json's
    assert_claims_read_every_seed("bitmark", per_seed_metrics(evaluated), [0, 1])
