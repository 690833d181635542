"""Seeds as an axis (docs/VERDICTS.md, section 1): each verdict seed's instances, runs and figures
depend on that seed alone, whatever else shares the lockstep batch; the metrics file's per_seed
layout; and the claims as the ledger reads them, the zero-violation must with its control (OPSE
without its pessimism)."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from tests.linear_cmdp.conftest import REPO


@pytest.fixture(scope="module")
def tiny():
    """The smoke profile cut to seconds: one binding instance per setup and seed, short runs."""
    from stages.common.runtime.params import load_study
    from stages.linear_cmdp.params import PARAMS

    _, p = load_study("linear_cmdp", PARAMS, profile="smoke")
    setups = {k: v.model_copy(update={"instances": 1}) for k, v in p.prepare.setups.items()}
    K = {"opse": 40, "ghosh": 30, "dope": 12}
    agents = [a.model_copy(update={"episodes": K[a.kind]}) for a in p.train.agents]
    return (p.prepare.model_copy(update={"setups": setups}), p.train.model_copy(update={"agents": agents}),
            p.evaluate)


def _run(tiny, seeds):
    from stages.linear_cmdp.evaluate import by_seed, of_seed, seed_figures
    from stages.linear_cmdp.instances import as_record
    from stages.linear_cmdp.prepare import seed_instances
    from stages.linear_cmdp.train import train_runs

    pp, tp, ep = tiny
    insts, prep = [], {}
    for s in seeds:
        own, prep[s] = seed_instances(pp, s, log=lambda _: None)
        insts += [as_record(r) for r in own]
    res, _ = train_runs(insts, tp, log=lambda _: None, progress=False)
    si = by_seed(insts)
    agents = [a.name for a in tp.agents]
    return res, {s: seed_figures(of_seed(res, s), si[s], s, agents, ep, prep[s]) for s in seeds}


def test_a_seed_gets_the_same_runs_and_figures_alone_as_beside_another(tiny):
    res01, figs01 = _run(tiny, [0, 1])
    res1, figs1 = _run(tiny, [1])
    ones = sorted(k for k in res01 if k.startswith("s1/"))
    assert ones == sorted(res1) and len(ones) >= 6 * 4
    for k in ones:
        np.testing.assert_array_equal(res01[k], res1[k], err_msg=k)
    assert figs01[1] == figs1[1]
    # and the seeds differ: another seed draws other instances and runs
    assert not np.array_equal(res01["s0/opse/V_r"], res01["s1/opse/V_r"])
    assert figs01[0]["main"]["setups"]["tabular"]["regret_at_K"] != figs01[1]["main"]["setups"]["tabular"]["regret_at_K"]


def test_a_run_does_not_depend_on_how_many_instances_the_setups_hold(tiny):
    from stages.linear_cmdp.instances import as_record
    from stages.linear_cmdp.prepare import seed_instances
    from stages.linear_cmdp.train import train_runs

    pp, tp, _ = tiny
    two = pp.model_copy(update={"setups": {k: v.model_copy(update={"instances": 2}) for k, v in pp.setups.items()}})
    one_agent = tp.model_copy(update={"agents": tp.agents[:1]})
    res = {}
    for n, p in ((1, pp), (2, two)):
        insts = [as_record(r) for r in seed_instances(p, 3, log=lambda _: None)[0]]
        out, _ = train_runs(insts, one_agent, log=lambda _: None, progress=False)
        draws = [(r["setup"], r["draw"]) for r in insts]
        res[n] = {d: out["s3/opse/V_r"][i] for i, d in enumerate(draws)}
    for draw, curve in res[1].items():                 # the linear instance's index moves from 1 to 2
        np.testing.assert_array_equal(res[2][draw], curve)


def test_per_seed_layout_means_and_totals():
    from stages.linear_cmdp.evaluate import seed_metrics

    def figs(v, slope):
        agent = {"episodes": 10, "runs": 2, "violating_episodes": v, "instances_violating": int(v > 0),
                 "max_violation": 0.1 * v, "min_utility_margin": -0.1 * v, "safe_deployments": 3,
                 "first_violation_episode": 2 if v else None, "violating_episodes_per_instance": [v, 0],
                 "setups": {"tabular": {"slope": slope, "ci_low": 0.1, "ci_high": 0.9, "per_instance": [slope] * 2}}}
        return {"agents": {"opse": agent}, "main": agent, "no_pessimism": agent, "primal_dual": agent,
                "uniform": {"regret_per_episode": [0.2, 0.3], "violates": [True, False]}}

    m = seed_metrics({0: figs(0, 0.5), 1: figs(4, 0.7)})
    assert m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"}
    assert m["main"]["setups"]["tabular"]["slope"] == pytest.approx(0.6)
    assert m["main"]["violating_episodes"] == pytest.approx(2.0)
    # within-seed figures stay in per_seed only
    assert "ci_low" not in m["main"]["setups"]["tabular"] and "per_instance" not in m["main"]["setups"]["tabular"]
    assert "violating_episodes_per_instance" not in m["main"] and "regret_per_episode" not in m["uniform"]
    assert m["per_seed"]["1"]["main"]["setups"]["tabular"]["ci_high"] == 0.9
    assert m["totals"]["main"] == {"violating_episodes": 4, "runs": 4, "episodes": 10, "instances_violating": 1,
                                   "seeds_violating": 1, "max_violation": pytest.approx(0.4),
                                   "min_utility_margin": pytest.approx(-0.4), "safe_deployments": 6}


def test_instances_out_of_order_are_refused():
    from stages.linear_cmdp.evaluate import by_seed

    assert list(by_seed([{"seed": 0, "index": 0}, {"seed": 2, "index": 0}, {"seed": 0, "index": 1}])) == [0, 2]
    with pytest.raises(ValueError, match=r"seed 0: instance indices \[1, 0\] are not 0..n-1"):
        by_seed([{"seed": 0, "index": 1}, {"seed": 0, "index": 0}])


def _ledger_figures(main_v, abl_v, ghosh_v, slopes):
    agent = lambda v, s: {"violating_episodes": v, "setups": {"tabular": {"slope": s}, "linear": {"slope": s}}}  # noqa: E731
    out = {}
    for i, seed in enumerate(range(5)):
        out[seed] = {"main": agent(main_v[i], slopes[i]), "no_pessimism": agent(abl_v[i], 0.5),
                     "primal_dual": agent(ghosh_v[i], 0.5),
                     "agents": {"opse_cu1": agent(0, 0.6), "opse_linear_official": agent(0, 0.8),
                                "dope": agent(0, 0.6)}}
    return out


def test_claims_read_every_seed_and_the_zero_violation_must_names_its_control():
    from stages.common.claims import ClaimsFileV2, evaluate, load_claims
    from stages.common.seeds import per_seed_metrics

    cf = load_claims(REPO / "stages/linear_cmdp/claims.yaml")
    assert isinstance(cf, ClaimsFileV2)
    live = {c.id: c for c in cf.claims if not c.retired}
    must = live["zero_violation_every_instance"]
    assert must.rule == "every_seed" and must.control == "no_pessimism.violating_episodes"
    assert must.metric == "main.violating_episodes" and must.threshold == 0
    seeds = [0, 1, 2, 3, 4]
    figs = _ledger_figures([0] * 5, [0, 3, 0, 12, 1], [900] * 5, [0.6, 0.62, 0.58, 0.61, 0.6])
    rows = {r["id"]: r for r in evaluate(cf, per_seed_metrics(copy.deepcopy(figs)), seeds)}
    row = rows["zero_violation_every_instance"]
    assert row["n"] == 5 and row["verdict"] == "holds" and row["control"]["verdict"] == "fails"
    assert rows["primal_dual_violates"]["verdict"] == "holds"
    assert rows["regret_slope_tabular"]["verdict"] == "holds" and rows["regret_slope_tabular"]["n"] == 5
    assert rows["optimum_lp_consistent"]["verdict"] == "retired"
    # one violating episode on one seed fails the must
    figs[3]["main"]["violating_episodes"] = 1
    row = {r["id"]: r for r in evaluate(cf, per_seed_metrics(copy.deepcopy(figs)), seeds)}["zero_violation_every_instance"]
    assert row["verdict"] == "fails"
    # a planted control that never violates either: the check would not see the pessimism
    figs[3]["main"]["violating_episodes"] = 0
    for s in seeds:
        figs[s]["no_pessimism"]["violating_episodes"] = 0
    row = {r["id"]: r for r in evaluate(cf, per_seed_metrics(copy.deepcopy(figs)), seeds)}["zero_violation_every_instance"]
    assert row["control"]["verdict"] == "holds" and row["verdict"] == "not specific"
    # a slope that straddles the threshold over the seeds is inconclusive, not a one-seed verdict
    figs = _ledger_figures([0] * 5, [5] * 5, [900] * 5, [0.55, 0.75, 0.6, 0.8, 0.65])
    row = {r["id"]: r for r in evaluate(cf, per_seed_metrics(figs), seeds)}["regret_slope_tabular"]
    assert row["verdict"] == "inconclusive"
