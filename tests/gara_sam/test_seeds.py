"""gara_sam over the verdict seeds: the shared pre-training scenes do not depend on the seed; each
seed's scenes, adapters and figures depend on that seed only; the claims read every seed's figures;
the base seed is validated by its message."""
from __future__ import annotations

import numpy as np
import pytest

from stages.common.runtime.params import load_study
from stages.gara_sam.params import PARAMS
from tests.helpers import params_error


def _tiny():
    _, p = load_study("gara_sam", PARAMS, profile="smoke")
    prep = p.prepare.model_copy(update={"n_pretrain": 16, "n_adapt": 16, "n_test": 6})
    tr = p.train.model_copy(update={
        "pretrain": p.train.pretrain.model_copy(update={"steps": 3, "batch": 8}),
        "adapt": p.train.adapt.model_copy(update={"steps": 3, "batch": 8})})
    return p.model_copy(update={"prepare": prep, "train": tr})


def test_scenes_of_a_seed_depend_on_that_seed_only():
    from stages.gara_sam.prepare import build

    p = _tiny().prepare
    both, alone = build(p, [0, 1], progress=False), build(p, [1], progress=False)
    for k in ("adapt_x", "adapt_y", "adapt_kind", "test_x", "test_y"):
        np.testing.assert_array_equal(both[f"1/{k}"], alone[f"1/{k}"])
    np.testing.assert_array_equal(both["pre_x"], alone["pre_x"])        # the shared pre-training set
    assert not np.array_equal(both["0/test_x"], both["1/test_x"])          # seeds draw differently
    assert "0/test_x" not in alone


def test_base_seed_changes_the_pretraining_scenes_only():
    from stages.gara_sam.prepare import build

    p = _tiny().prepare
    a, b = build(p, [1], progress=False), build(p.model_copy(update={"base_seed": p.base_seed + 1}), [1], progress=False)
    assert not np.array_equal(a["pre_x"], b["pre_x"])
    np.testing.assert_array_equal(a["1/test_x"], b["1/test_x"])


def test_figures_of_a_seed_do_not_depend_on_the_other_seeds():
    """Seed 1's metrics are the same whether seed 0 ran before it in the process or not."""
    import torch

    from stages.gara_sam.evaluate import evaluate_seeds
    from stages.gara_sam.net import state_arrays, to_tensor
    from stages.gara_sam.prepare import build
    from stages.gara_sam.train import ADAPT_ARMS, adapt, pretrain

    p = _tiny()
    tp = p.train

    def figures(seeds):
        data = build(p.prepare, seeds, progress=False)
        base, _ = pretrain(to_tensor(data["pre_x"], image=True), to_tensor(data["pre_y"]), tp.width, tp.pretrain,
                           p.prepare.base_seed, progress=False)
        weights = state_arrays(base, "frozen")
        for s in seeds:
            x, y = to_tensor(data[f"{s}/adapt_x"], image=True), to_tensor(data[f"{s}/adapt_y"])
            for arm in ADAPT_ARMS:
                torch.manual_seed(12345)          # a stray global draw must not reach a seed's figures
                weights.update(state_arrays(adapt(arm, base, x, y, tp.adapt, s, progress=False)[0], f"{s}/{arm}"))
        return evaluate_seeds(weights, data, tp, p.evaluate, seeds)

    both, alone = figures([0, 1]), figures([1])
    assert both["per_seed"]["1"] == alone["per_seed"]["1"]
    assert both["per_seed"]["0"] != both["per_seed"]["1"]
    assert both["seeds"] == [0, 1]


def test_claims_read_every_seed():
    import json
    from pathlib import Path

    from tests.helpers import assert_claims_read_every_seed

    path = Path(__file__).resolve().parents[2] / "reports/gara_sam/metrics.json"
    m = json.loads(path.read_text())
    if "per_seed" not in m:
        pytest.skip("reports/gara_sam/metrics.json is the one-seed run: rebuild the study")
    assert_claims_read_every_seed("gara_sam", m, [int(s) for s in m["seeds"]])


def test_base_seed_must_be_non_negative(params_copy):
    params_copy["gara_sam"]["default"]["prepare"]["base_seed"] = -1
    assert "base_seed" in params_error("gara_sam", PARAMS, params_copy)
