"""Seeds as an axis (docs/VERDICTS.md, section 1): the verdict seeds run in one simulation give
every seed the figures it gets alone (bit for bit), a seed's figures depend on its seed, the
per_seed metrics layout the ledger reads, and the claims over the seeds with the must's control."""
from __future__ import annotations

import numpy as np
import pytest

from stages.common.runtime.params import load_study
from stages.nac_b.params import NacBParams

SEEDS = [1000, 1001, 1002]                      # calibration seeds (any seed would do in a test)


@pytest.fixture(scope="module")
def tiny(real_params):
    """The smoke profile, smaller still: three horizons, two runs per arm, a short batching sweep."""
    _, p = load_study("nac_b", NacBParams, real_params, profile="smoke")
    rp = p.train.regret.model_copy(update={"T_grid": [300, 600, 1200], "runs": 2, "baseline_runs": 1,
                                           "checkpoints": 5})
    bp = p.train.batching.model_copy(update={"T": 400, "steps": [0.3, 2.0], "tune_runs": 1, "eval_runs": 2})
    tp = p.train.model_copy(update={"regret": rp, "batching": bp})
    return p.prepare.model_copy(update={"max_policies_checked": 8}), tp, p.evaluate


def _mdps(pp, seeds) -> dict:
    from stages.nac_b.prepare import NAMES, build_mdps, references

    out = {}
    for s in seeds:
        m = build_mdps(pp, s)
        out[s] = {k: (m[k].P, m[k].r, references(m[k], pp)) for k in NAMES}
    return out


def _train(mdps, tp, seeds) -> dict:
    from stages.nac_b.train import batching_sweep, regret_sweep

    reg = regret_sweep(mdps, seeds, tp.regret, tp, progress=None)
    bat = batching_sweep(mdps, seeds, tp.batching, tp, progress=False)
    return {s: {"regret": reg[s], "batching": bat[s]} for s in seeds}


@pytest.fixture(scope="module")
def together(tiny):
    pp, tp, _ = tiny
    return _train(_mdps(pp, SEEDS), tp, SEEDS)


def test_a_seed_gets_the_same_runs_alone_as_among_other_seeds(tiny, together):
    """Running seeds [1000, 1001, 1002] and [1001] gives seed 1001 the same regrets, bit for bit,
    in both sweeps (its own MDPs, its own generators, its own column of the uniform stream)."""
    pp, tp, _ = tiny
    alone = _train(_mdps(pp, [1001]), tp, [1001])[1001]
    assert alone == together[1001]
    again = _train(_mdps(pp, [1002, 1000]), tp, [1002, 1000])
    assert again[1000] == together[1000] and again[1002] == together[1002]


def test_a_seeds_figures_depend_on_its_seed(together):
    a, b = together[1000]["regret"], together[1001]["regret"]
    assert a["J_star"] != b["J_star"]                              # its own MDP
    assert a["nacb"]["regret"] != b["nacb"]["regret"]
    assert together[1000]["batching"]["tune"] != together[1001]["batching"]["tune"]


def test_uniform_stream_groups_draw_from_their_own_generators():
    from stages.nac_b.nacb import uniform_stream

    g = list(uniform_stream([(np.random.default_rng(5), 2), (np.random.default_rng(6), 3)], 5, 7, chunk=4))
    U = np.array(g)
    assert U.shape == (7, 5)
    # group 0's two columns: rows drawn chunk by chunk from generator 5 alone; group 1's from 6
    g5 = np.random.default_rng(5)
    np.testing.assert_array_equal(U[:4, :2], g5.random((4, 2)))
    np.testing.assert_array_equal(U[4:, :2], g5.random((3, 2)))
    g6 = np.random.default_rng(6)
    np.testing.assert_array_equal(U[:4, 2:], g6.random((4, 3)))
    np.testing.assert_array_equal(U[4:, 2:], g6.random((3, 3)))
    with pytest.raises(ValueError, match="the rng groups hold 5 runs, not 6"):
        next(uniform_stream([(np.random.default_rng(5), 2), (np.random.default_rng(6), 3)], 6, 7))


def test_metrics_layout_per_seed_and_within_seed_figures_kept_apart(tiny, together):
    from stages.nac_b.evaluate import seed_figures, seed_metrics
    from stages.nac_b.prepare import seed_metrics as prepare_metrics

    pp, _, ep = tiny
    mdps = _mdps(pp, SEEDS)
    figs = {}
    for s in SEEDS:
        prep = prepare_metrics({k: v[2] for k, v in mdps[s].items()})
        figs[s] = seed_figures(together[s], prep, ep, s)
    m = seed_metrics(figs)
    assert m["seeds"] == SEEDS and set(m["per_seed"]) == {"1000", "1001", "1002"}
    slopes = [figs[s]["regret"]["slope"] for s in SEEDS]
    assert m["regret"]["slope"] == pytest.approx(np.mean(slopes))
    assert m["per_seed"]["1001"]["control_arms"]["no_batching"]["slope"] == figs[1001]["control_arms"]["no_batching"]["slope"]
    assert "ci_low" in m["per_seed"]["1000"]["regret"] and "ci_low" not in m["regret"]
    assert "ratio_ci" not in m["batching"]["tuned"] and "ratio_ci" in m["per_seed"]["1000"]["batching"]["tuned"]


def _metrics(**arms) -> dict:
    """A metrics file with per-seed values at dotted keys."""
    per = {}
    for key, values in arms.items():
        for s, v in zip(range(5), values):
            node = per.setdefault(str(s), {})
            *head, last = key.split("__")
            for h in head:
                node = node.setdefault(h, {})
            node[last] = v
    return {"per_seed": per}


def test_must_is_not_specific_when_its_control_passes_and_holds_when_not():
    """The registered claims file: the must holds only if NAC-B's slopes sit in the window and
    the no-batching ablation's do not."""
    from pathlib import Path

    from stages.common.claims import evaluate, load_claims

    cf = load_claims(Path(__file__).resolve().parents[2] / "stages/nac_b/claims.yaml")
    must = next(c for c in cf.claims if c.id == "regret_slope")
    cf1 = cf.model_copy(update={"claims": [must]})
    inside = [0.55, 0.6, 0.58, 0.62, 0.57]
    (row,) = evaluate(cf1, _metrics(regret__slope=inside, control_arms__no_batching__slope=inside), list(range(5)))
    assert row["verdict"] == "not specific" and row["control"]["verdict"] == "holds"
    (row,) = evaluate(cf1, _metrics(regret__slope=inside,
                                    control_arms__no_batching__slope=[0.9, 0.95, 0.85, 1.0, 0.92]), list(range(5)))
    assert row["verdict"] == "holds" and row["control"]["verdict"] == "fails"
    (row,) = evaluate(cf1, _metrics(regret__slope=[0.8, 0.9, 0.85, 0.95, 0.88],
                                    control_arms__no_batching__slope=inside), list(range(5)))
    assert row["verdict"] == "fails"
