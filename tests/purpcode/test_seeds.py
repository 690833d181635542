"""purpcode on the seed axis (claims contract v2): each seed's figures depend only on its seed
(running seeds [0, 1] or [1] alone gives seed 1 the same figures), the seeds differ, and every
claim reads each seed's figures. Tiny sizes: the smoke profile cut to a few steps."""
from __future__ import annotations

import pytest

from stages.common.runtime.params import load_study
from stages.common.seeds import per_seed_metrics
from stages.purpcode.params import PARAMS
from tests.helpers import assert_claims_read_every_seed


@pytest.fixture(scope="module")
def tiny():
    _, p = load_study("purpcode", PARAMS, profile="smoke")
    train = p.train.model_copy(update={
        "base": p.train.base.model_copy(update={"steps": 20}),
        "rule": p.train.rule.model_copy(update={"steps": 5}),
        "rl": p.train.rl.model_copy(update={"iterations": 1, "prompts": 4, "group": 2})})
    return p.model_copy(update={"train": train})


def _figures(p, seeds, oracle):
    from stages.purpcode.evaluate import claim_figures, evaluate_models
    from stages.purpcode.prepare import build
    from stages.purpcode.train import train_all

    out = {}
    for s in seeds:
        dataset, _ = build(p.prepare, s, oracle)
        models, _, _ = train_all(dataset, p.train, s, progress=False, oracle=oracle)
        r = evaluate_models(models, [tuple(q) for q in dataset["test"]], oracle, 1, 1.0, s + 1000)
        out[s] = {"methods": r, "claim": claim_figures(r)}
    return out


@pytest.fixture(scope="module")
def runs(tiny):
    from stages.purpcode.oracle import Oracle

    oracle = Oracle(tuple(tiny.prepare.skip), tiny.prepare.sandbox_timeout)     # shared, as the stages share it
    return _figures(tiny, [0, 1], oracle), _figures(tiny, [1], Oracle(tuple(tiny.prepare.skip), tiny.prepare.sandbox_timeout))


def test_a_seeds_figures_depend_only_on_its_seed(runs):
    both, alone = runs
    assert both[1] == alone[1]


def test_the_seeds_differ(runs):
    both, _ = runs
    assert both[0]["methods"] != both[1]["methods"]


def test_every_claim_reads_each_seeds_figures(runs):
    both, _ = runs
    assert_claims_read_every_seed("purpcode", per_seed_metrics(both), [0, 1])
