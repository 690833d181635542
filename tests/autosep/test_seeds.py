"""autosep on the claims contract v2: every verdict seed runs, each seed's figures depend on its
seed alone, the control arms are what they claim to be, and every claim reads each seed's figures."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.helpers import assert_claims_read_every_seed


@pytest.fixture(scope="module")
def tiny():
    """The smoke profile's params, cut to one search round and 3 random prompts: seconds a seed."""
    from stages.autosep.data import load
    from stages.autosep.params import PARAMS
    from stages.common.runtime.params import load_study

    _, p = load_study("autosep", PARAMS, profile="smoke")
    t = p.train.model_copy(update={"search": p.train.search.model_copy(update={"rounds": 1})})
    p = p.model_copy(update={"train": t, "evaluate": p.evaluate.model_copy(update={"n_random": 3})})
    return load(), p


def _run(tiny, seeds):
    """Each seed's figures, the way the stages compute them: the splits of every seed in one file
    (prepare), then the seeds one after another in one process (train, evaluate)."""
    from stages.autosep.data import seed_split, split_seeds
    from stages.autosep.experiment import evaluate_seed, train_seed
    from stages.common.seeds import run_seeds

    (x, y), p = tiny
    d = split_seeds(y, seeds, p.prepare.pretrain_frac, p.prepare.n_unlabelled, p.prepare.repeats)
    found = run_seeds(seeds, lambda s: train_seed(x, y, seed_split(d, s), p.train, s)["prompts"])
    found = json.loads(json.dumps({str(s): v for s, v in found.items()}))       # as prompts.json holds them
    return run_seeds(seeds, lambda s: evaluate_seed(x, y, seed_split(d, s), found[str(s)], p.train,
                                                    p.evaluate.n_random, s))


@pytest.fixture(scope="module")
def two_seeds(tiny):
    return _run(tiny, [0, 1])


def test_a_seed_figures_depend_on_its_seed_alone(tiny, two_seeds):
    alone = _run(tiny, [1])
    assert json.dumps(alone[1], sort_keys=True) == json.dumps(two_seeds[1], sort_keys=True)
    assert two_seeds[0]["accuracy"] != two_seeds[1]["accuracy"]      # the seed is used


def test_a_seed_reruns_to_the_same_figures(tiny, two_seeds):
    again = _run(tiny, [0])
    assert json.dumps(again[0], sort_keys=True) == json.dumps(two_seeds[0], sort_keys=True)


def test_control_arms_are_the_arms_without_autosep(two_seeds):
    for m in two_seeds.values():
        a = m["accuracy"]
        best = max(("generic", "majority_vote", "kmeans", "random_prompt", "opt_majority_vote", "opt_random_labels"),
                   key=lambda k: a[k])
        assert m["best_baseline"] == best and m["best_baseline_accuracy"] == a[best]
        assert m["gain_best_baseline_pp"] == pytest.approx(100 * (a["autosep"] - a[best]))
        c = m["controls"]
        assert c["generic_arm"]["gain_zero_shot_pp"] == pytest.approx(100 * (a["generic"] - a["zero_shot"]))
        assert c["random_score_arm"]["gain_generic_pp"] == pytest.approx(100 * (a["random_score"] - a["generic"]))
        assert c["random_score_arm"]["gain_best_baseline_pp"] == pytest.approx(100 * (a["random_score"] - a[best]))
        b = c["blind_score"]["accuracy"]
        assert c["blind_score"]["gain_random_score_pp"] == pytest.approx(100 * (b["autosep"] - b["random_score"]))
        # the control settings search only what their checks read
        assert set(b) >= {"autosep", "random_score", "zero_shot", "generic"} and "true_label" not in b


def test_every_claim_reads_each_seed(two_seeds):
    from stages.common.seeds import per_seed_metrics

    assert_claims_read_every_seed("autosep", per_seed_metrics(two_seeds), [0, 1])


def test_split_seeds_stacks_each_seed_split():
    from stages.autosep.data import load, seed_split, split, split_seeds

    _, y = load()
    d = split_seeds(y, [5, 2], 0.3, 10, 2)
    for s in (5, 2):
        want = split(y, s, 0.3, 10, 2)
        got = seed_split(d, s)
        for k in ("pretrain", "unlabelled", "test"):
            assert np.array_equal(got[k], want[k])
    with pytest.raises(KeyError, match=r"holds the seeds \[5, 2\], not 3"):
        seed_split(d, 3)
