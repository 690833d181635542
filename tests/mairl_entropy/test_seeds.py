"""Seeds as an axis (docs/VERDICTS.md, section 1): each verdict seed's figures come from its own
streams (the same whatever ran before it, different from another seed's), the per_seed metrics
layout the ledger reads, the claims over the seeds with their controls, and the stacked solver
the seeds benchmark compares with one game after another."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from stages.common.claims import evaluate, load_claims
from stages.common.runtime.params import load_study
from stages.common.seeds import per_seed_metrics
from stages.mairl_entropy import games as G
from stages.mairl_entropy import qre
from stages.mairl_entropy.evaluate import ERRORS, ambiguity_summary, seed_summary
from stages.mairl_entropy.params import MairlParams
from stages.mairl_entropy.stats import loglog_fit
from stages.mairl_entropy.train import ambiguity, run_seed

REPO = Path(__file__).resolve().parents[2]
SEEDS = [1000, 1001]                     # calibration seeds (any seed would do in a test)


def quiet(x, **_):
    return x


@pytest.fixture(scope="module")
def tiny(real_params):
    """The smoke profile, smaller still."""
    _, p = load_study("mairl_entropy", MairlParams, real_params, profile="smoke")
    tp = p.train.model_copy(update={
        "uniqueness": p.train.uniqueness.model_copy(update={"n_starts": 4}),
        "verify": p.train.verify.model_copy(update={"mmd_iterations": 50, "tau_grid": [1.0]}),
        "recovery": p.train.recovery.model_copy(update={"repetitions": 4}),
        "ambiguity": p.train.ambiguity.model_copy(update={"plot_points": 2, "n_starts": 4})})
    return p.prepare, tp, p.evaluate


def _games(pp, seed):
    return G.generate(seed, pp.n_games, pp.n_states, tuple(pp.n_actions), pp.gamma, pp.reward_low, pp.reward_high,
                      pp.transition_concentration, pp.stake_low, pp.stake_high)


@pytest.fixture(scope="module")
def runs(tiny):
    pp, tp, _ = tiny
    return {s: run_seed(s, G.games_from(_games(pp, s)), tp, quiet) for s in SEEDS}


def _figures(tree):
    """A results tree without its wall-time fields (``*_s``), as JSON text."""
    def drop(t):
        if isinstance(t, dict):
            return {k: drop(v) for k, v in t.items() if not k.endswith("_s")}
        return [drop(v) for v in t] if isinstance(t, list) else t
    return json.dumps(drop(tree), sort_keys=True)


def test_a_seed_gets_its_figures_whatever_ran_before_it(tiny, runs):
    pp, tp, _ = tiny
    again, arrays, _ = run_seed(SEEDS[1], G.games_from(_games(pp, SEEDS[1])), tp, quiet)
    assert _figures(again) == _figures(runs[SEEDS[1]][0])
    assert all(np.array_equal(arrays[k], runs[SEEDS[1]][1][k]) for k in arrays)
    a, b = (runs[s][0] for s in SEEDS)
    assert a["transfer"]["games"][0]["max_distance"] != b["transfer"]["games"][0]["max_distance"]
    assert not np.array_equal(_games(pp, SEEDS[0])["R"], _games(pp, SEEDS[1])["R"])


@pytest.fixture(scope="module")
def metrics(tiny, runs) -> dict:
    """The metrics file's layout for the tiny runs (as evaluate writes it, without its plots)."""
    pp, tp, ep = tiny
    per_seed = {}
    for s, (res, arrays, _) in runs.items():
        m = seed_summary(res)
        rng = np.random.default_rng([s, 6])
        m["recovery"] = {k: loglog_fit(arrays["n"], arrays[k], 100, 0.95, rng) for k in ERRORS}
        per_seed[s] = m
    amb = ambiguity(_games(pp, SEEDS[0]), tp.ambiguity, tp.solver.model_dump(), np.random.default_rng(0), quiet)
    return per_seed_metrics(per_seed, ambiguity=ambiguity_summary({"seed": SEEDS[0], **amb}))


def test_every_claim_reads_its_figures_per_seed(metrics):
    m = metrics
    assert sorted(m["per_seed"]) == [str(s) for s in SEEDS]
    assert m["ambiguity"]["nature_gap"] == 2.0 and "ambiguity" not in m["per_seed"][str(SEEDS[0])]
    rows = evaluate(load_claims(REPO / "stages/mairl_entropy/claims.yaml"), m, SEEDS)
    live = [r for r in rows if r["verdict"] != "retired"]
    assert {r["id"] for r in live} == {"recovered_reward_reproduces_expert", "qre_unique", "solver_matches_libraries"}
    for r in live:
        assert r["verdict"] != "not run" and r["n"] == len(SEEDS), r["id"]
        assert r["control"] is None or r["control"]["n"] == len(SEEDS)
        assert all(v is not None for v in r["context"].values()), (r["id"], r["context"])


def test_the_must_needs_its_control_to_fail(metrics):
    """Planted per-seed figures: the headline must holds when the control arm fails, and is
    not specific when the control arm passes too."""
    m = copy.deepcopy(metrics)
    cf = load_claims(REPO / "stages/mairl_entropy/claims.yaml")

    def verdict(main, control):
        for s, v, c in zip(SEEDS, main, control):
            m["per_seed"][str(s)]["transfer"]["max_policy_distance"] = v
            m["per_seed"][str(s)]["transfer_control"]["max_policy_distance"] = c
        return next(r for r in evaluate(cf, m, SEEDS) if r["id"] == "recovered_reward_reproduces_expert")["verdict"]

    assert verdict([0.03, 0.02], [0.9, 0.03]) == "holds"
    assert verdict([0.03, 0.02], [0.04, 0.03]) == "not specific"
    assert verdict([0.03, 0.5], [0.9, 0.9]) == "fails"


def test_stacked_games_solve_as_one_game_at_a_time(small_games, rng):
    tau = 1.0
    starts = [qre.random_policies(g, 5, rng, 0.5) for g in small_games]
    one = [qre.solve_qre(g, tau, *st) for g, st in zip(small_games, starts)]
    big = qre.stack_games(small_games, [5] * len(small_games))
    both = qre.solve_qre(big, tau, np.concatenate([s[0] for s in starts]), np.concatenate([s[1] for s in starts]))
    assert both.converged.all()
    assert np.abs(both.pi1 - np.concatenate([r.pi1 for r in one])).max() < 1e-11
    assert np.abs(both.pi2 - np.concatenate([r.pi2 for r in one])).max() < 1e-11
    other = qre.Game(small_games[0].P, small_games[0].R, 0.5, small_games[0].mu0)
    with pytest.raises(ValueError, match="discounts differ"):
        qre.stack_games([small_games[0], other], [1, 1])
