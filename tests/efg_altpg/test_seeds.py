"""Seeds as an axis (docs/VERDICTS.md, section 1): runs batched a run per column give every run
the figures it gets alone (bit for bit), a verdict seed's figures depend on that seed only
(the train stage's functions run for seeds [0, 1] and [1] give seed 1 the same runs), the
first-hit rounds against a plain run, and the claims' wiring over the seeds (controls)."""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from stages.common.claims import evaluate, load_claims
from stages.common.runtime.params import load_study
from stages.efg_altpg import algorithms as al
from stages.efg_altpg.params import EfgAltPGParams
from stages.efg_altpg.train import rng_for

REPO = Path(__file__).resolve().parents[2]
ROWS = [(0.01, 1.0), (0.0, 2.0), (0.01, 0.3), (0.0, 1.0)]          # (tau, step) of four runs


@pytest.mark.parametrize("variant", al.PARAMETRISATIONS)
@pytest.mark.parametrize("episodes", [0, 50])
def test_batch_gives_every_run_its_figures_alone(kuhn, variant, episodes):
    """Mixed taus and steps in one batch (exact and sampled gradients, average iterates too):
    each run's curves and last policies equal the run alone, bit for bit."""
    _, sf = kuhn
    taus, etas = zip(*ROWS)
    batch = al.run_batch(sf, variant, taus, etas, 60, [rng_for(7, "b", r) for r in range(len(ROWS))],
                         eval_every=7, episodes=episodes, average=True)
    for r, (tau, eta) in enumerate(ROWS):
        one = al.run(sf, variant, tau, eta, 60, rng_for(7, "b", r), eval_every=7, episodes=episodes, average=True)
        assert np.array_equal(batch.expl[r], one.expl) and np.array_equal(batch.avg_expl[r], one.avg_expl)
        assert np.array_equal(batch.pis[0][:, r], one.pis[0]) and np.array_equal(batch.pis[1][:, r], one.pis[1])


def test_batch_on_leduc_matches_alone(leduc):
    """Leduc has 2- and 3-action infosets and several parents per level: the column-wise
    reductions still give each run its own figures."""
    _, sf = leduc
    batch = al.run_batch(sf, "direct", [0.001, 0.0], [10.0, 5.0], 15, [rng_for(3, r) for r in range(2)],
                         eval_every=5, average=True)
    for r, (tau, eta) in enumerate([(0.001, 10.0), (0.0, 5.0)]):
        one = al.run(sf, "direct", tau, eta, 15, rng_for(3, r), eval_every=5, average=True)
        assert np.array_equal(batch.expl[r], one.expl) and np.array_equal(batch.avg_expl[r], one.avg_expl)


def test_average_iterate_is_the_mean_realisation_plan(kuhn):
    """avg_expl at round t is the exploitability of the mean of the realisation plans of rounds
    1..t (recomputed here by stepping the learners by hand)."""
    from stages.efg_altpg.seqform import exploitability

    _, sf = kuhn
    res = al.run(sf, "softmax", 0.0, 1.0, 12, np.random.default_rng(4), eval_every=4, average=True)
    rng = np.random.default_rng(4)
    p0 = al.Learner.start(sf.trees[0], "softmax", 0.0, 1.0, 1e-3, rng, 1.0)
    p1 = al.Learner.start(sf.trees[1], "softmax", 0.0, 1.0, 1e-3, rng, 1.0)
    xs, ys, want = [], [], []
    for t in range(1, 13):
        p0.step(sf.A @ p1.x)
        p1.step(-(sf.AT @ p0.x))
        xs.append(p0.x[:, 0])
        ys.append(p1.x[:, 0])
        if t % 4 == 0:
            want.append(exploitability(sf, np.mean(xs, axis=0), np.mean(ys, axis=0)))
    np.testing.assert_allclose(res.avg_expl[1:], want, rtol=0, atol=1e-14)


def test_rounds_to_target_is_the_first_hit_of_a_plain_run(kuhn):
    """The first-hit round of each run of a batch (runs leave it as they hit) equals the first
    round with exploitability <= target of the same run recorded every round; -1 if never."""
    _, sf = kuhn
    targets = [0.2, 0.05, 0.02, 1e-6]
    hit = al.rounds_to_target(sf, "npg", [t / 2 for t in targets], 1.0, targets, 400,
                              [rng_for(5, "rate", r) for r in range(4)])
    for r, target in enumerate(targets):
        one = al.run(sf, "npg", target / 2, 1.0, 400, rng_for(5, "rate", r), eval_every=1)
        below = np.flatnonzero(one.expl <= target)
        assert hit[r] == (int(one.iters[below[0]]) if len(below) else -1), target
    assert hit[-1] == -1 and hit[0] > 0


@pytest.fixture(scope="module")
def tiny(real_params):
    """The smoke profile, smaller still."""
    _, p = load_study("efg_altpg", EfgAltPGParams, real_params, profile="smoke")
    t = p.train
    short = {"iterations": 40, "eval_every": 10}
    return t.model_copy(update={
        "kuhn_poker": t.kuhn_poker.model_copy(update={**short, "inits": 2,
                                                      "steps": t.kuhn_poker.steps.model_copy(update={"npg": [0.3, 1.0]})}),
        "sampled": t.sampled.model_copy(update={**short, "episodes": 30}),
        "rate": t.rate.model_copy(update={"starts": 2, "max_iterations": 300}),
    })


class _Bar:
    def update(self, n):
        pass


def test_a_seeds_runs_depend_on_that_seed_only(kuhn, tiny):
    """grid_runs, sampled_runs and rate_sweep for seeds [0, 1] and for [1]: seed 1's records
    are the same (its starts and episodes come from its own generators)."""
    from stages.efg_altpg.train import grid_runs, rate_sweep, sampled_runs

    game, sf = kuhn
    both = grid_runs(sf, {0: game, 1: game}, "kuhn_poker", tiny.kuhn_poker, tiny, [0, 1], _Bar())
    alone = grid_runs(sf, {1: game}, "kuhn_poker", tiny.kuhn_poker, tiny, [1], _Bar())
    assert both[1] == alone[1] and both[0] != both[1]
    assert sampled_runs(sf, game, tiny.sampled, tiny, [0, 1], _Bar())[1] == \
        sampled_runs(sf, game, tiny.sampled, tiny, [1], _Bar())[1]
    assert rate_sweep(sf, tiny.rate, tiny, [0, 1], _Bar())[1] == rate_sweep(sf, tiny.rate, tiny, [1], _Bar())[1]


def test_step_is_chosen_per_seed_and_arm(kuhn, tiny):
    """The kept step of each (seed, variant, arm) has the lowest late mean of its grid, and the
    kept runs are that step's runs of that seed."""
    from stages.efg_altpg.train import grid_runs

    game, sf = kuhn
    out = grid_runs(sf, {0: game, 1: game}, "kuhn_poker", tiny.kuhn_poker, tiny, [0, 1], _Bar())
    for s in (0, 1):
        for kind in ("reg", "unreg"):
            d = out[s]["npg"][kind]
            assert set(d["grid"]) == {"0.3", "1.0"} and d["grid"][repr(d["step"])] == min(d["grid"].values())
            assert len(d["runs"]) == 2
            assert d["grid"][repr(d["step"])] == pytest.approx(np.mean([r["late_mean"] for r in d["runs"]]))


def _metrics(values: dict) -> dict:
    """A metrics file with per-seed figures (dotted key -> five values) and nothing else."""
    per = {}
    for s in range(5):
        per[str(s)] = {}
        for key, vals in values.items():
            node = per[str(s)]
            *path, last = key.split(".")
            for k in path:
                node = node.setdefault(k, {})
            node[last] = vals[s]
    return {"per_seed": per}


def test_claims_read_each_must_with_its_control():
    """The must's control is the unregularized last iterate: a planted control that passes too
    makes the must not specific; the ratio's control is the average iterates' ratio."""
    cf = load_claims(REPO / "stages/efg_altpg/claims.yaml")
    good = {"kuhn_poker.reg_last_max": [0.0055] * 4 + [0.0056], "kuhn_poker.unreg_last_max": [0.18, 0.2, 0.24, 0.19, 0.17],
            "kuhn_poker.ratio_min": [8.5, 9.5, 8.4, 9.6, 9.5], "kuhn_poker.avg_ratio_min": [0.2, 0.8, 0.2, 0.6, 0.3]}
    rows = {r["id"]: r for r in evaluate(cf, _metrics(good), list(range(5)))}
    assert rows["kuhn_last_iterate"]["verdict"] == "holds" and rows["kuhn_last_iterate"]["control"]["verdict"] == "fails"
    assert rows["kuhn_regularization_needed"]["verdict"] == "holds"
    bad = copy.deepcopy(good)
    bad["kuhn_poker.unreg_last_max"] = [0.01, 0.02, 0.015, 0.01, 0.02]
    bad["kuhn_poker.avg_ratio_min"] = [5.0, 6.0, 5.5, 7.0, 6.0]
    rows = {r["id"]: r for r in evaluate(cf, _metrics(bad), list(range(5)))}
    assert rows["kuhn_last_iterate"]["verdict"] == "not specific"
    assert rows["kuhn_regularization_needed"]["verdict"] == "not specific"
    assert rows["leduc_regularization_needed"]["verdict"] == "not run"
