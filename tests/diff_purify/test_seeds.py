"""Seeds as an axis (docs/VERDICTS.md, section 1): each seed draws its own split, networks and
attacks, a seed's figures depend on that seed alone, and the ledger finds every claim's figures
(metric, baseline, control, context) in each seed's entry of the metrics layout."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.common.runtime.params import load_study
from stages.common.seeds import per_seed_metrics
from stages.diff_purify.params import PARAMS
from tests.helpers import assert_claims_read_every_seed

SEEDS = [1000, 1001]                     # calibration seeds (any seed would do in a test)


@pytest.fixture(scope="module")
def tiny(real_params):
    """The smoke profile, smaller still: seconds for two seeds' train and evaluate."""
    _, p = load_study("diff_purify", PARAMS, real_params, profile="smoke")
    train = p.train.model_copy(update={"clf_steps": 60, "score_steps": 30, "score_hidden": 16, "clf_hidden": 16,
                                       "pert_pgd_steps": 2})
    ev = p.evaluate.model_copy(update={"n_attack": 12, "pgd_steps": 2, "bpda_steps": 2, "eot": 1,
                                       "defence_reps": 1, "eps": [0.05, 0.1], "small_eps": 0.05})
    pur = p.purify.model_copy(update={"steps": 2})
    return p.model_copy(update={"train": train, "evaluate": ev, "purify": pur})


def _run(p, seeds):
    """{seed: (its train_seeds entry, its evaluate_seed figures)}, the seeds trained together."""
    from stages.diff_purify.data import load_digits_split
    from stages.diff_purify.evaluate import evaluate_seed
    from stages.diff_purify.train import train_seeds

    splits = {s: load_digits_split(p.prepare.test_fraction, s) for s in seeds}
    trained, _ = train_seeds({s: sp[:2] for s, sp in splits.items()}, p.train, log=lambda m: None)
    return {s: (trained[s], evaluate_seed(splits[s][2], splits[s][3], trained[s]["nets"], p.purify, p.evaluate, s,
                                          log=lambda m: None)) for s in seeds}


@pytest.fixture(scope="module")
def two_seeds(tiny):
    return _run(tiny, SEEDS)


def test_a_seeds_figures_depend_on_that_seed_alone(tiny, two_seeds):
    """Seed 1001 trained alone (not batched with seed 1000), after other torch draws, gets the
    networks and figures it got batched with seed 1000; seed 1000's figures differ from it."""
    torch.manual_seed(123)
    torch.rand(7)
    tr, ev = _run(tiny, SEEDS[1:])[SEEDS[1]]
    tr1, ev1 = two_seeds[SEEDS[1]]
    for name, net in tr["nets"].items():
        for k, v in net.state_dict().items():
            torch.testing.assert_close(v, tr1["nets"][name].state_dict()[k], rtol=0, atol=0, msg=f"{name} {k}")
    assert ev["metrics"] == ev1["metrics"] and tr["metrics"] == tr1["metrics"] and tr["losses"] == tr1["losses"]
    assert ev["metrics"]["clean"] != two_seeds[SEEDS[0]][1]["metrics"]["clean"] or \
        ev["metrics"]["main"] != two_seeds[SEEDS[0]][1]["metrics"]["main"]


def test_each_seed_draws_its_own_split():
    from stages.diff_purify.data import seed_split, split_arrays

    arrays = split_arrays(0.25, [0, 1000])
    a, b = seed_split(arrays, 0), seed_split(arrays, 1000)
    assert len(a[2]) == len(b[2]) == 450 and not np.array_equal(a[2], b[2])
    # the same 1797 digits in every split: train and test of a seed are disjoint and cover them all
    assert len(a[0]) + len(a[2]) == 1797
    assert np.array_equal(a[2], split_arrays(0.25, [0])["x_test_0"])
    with pytest.raises(KeyError, match=r"no split of seed 5 \(it has \[0, 1000\]\)"):
        seed_split(arrays, 5)


def test_the_ledger_finds_every_claims_figures_per_seed(two_seeds):
    m = per_seed_metrics({s: two_seeds[s][1]["metrics"] for s in SEEDS})
    assert sorted(m["per_seed"]) == ["1000", "1001"] and m["seeds"] == SEEDS
    assert_claims_read_every_seed("diff_purify", m, SEEDS)


def test_weights_hold_every_seed_and_refuse_a_missing_one(tmp_path, two_seeds):
    import io

    from stages.diff_purify.core import load_weights

    state = {str(s): {k: n.state_dict() for k, n in two_seeds[s][0]["nets"].items()} for s in SEEDS}
    cfg = {"clf_hidden": 16, "score_hidden": 16, "seeds": SEEDS, "model_seed": SEEDS[0]}
    buf = io.BytesIO()
    torch.save({"config": cfg, "nets": state}, buf)
    path = tmp_path / "w.pt"
    path.write_bytes(buf.getvalue())
    nets, _ = load_weights(path)                      # the model's seed by default
    x = torch.rand(3, 64)
    torch.testing.assert_close(nets["classifier"](x), two_seeds[SEEDS[0]][0]["nets"]["classifier"](x))
    nets, _ = load_weights(path, SEEDS[1])
    torch.testing.assert_close(nets["prior"](x, torch.tensor(0.1)),
                               two_seeds[SEEDS[1]][0]["nets"]["prior"](x, torch.tensor(0.1)))
    with pytest.raises(KeyError, match="no networks of seed 7"):
        load_weights(path, 7)
