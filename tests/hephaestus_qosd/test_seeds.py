"""hephaestus_qosd over the verdict seeds: a seed's figures depend on that seed alone, every method's
perturbation is feasible by construction (the stage stops otherwise), the per_seed layout the ledger
reads, and the musts judged with their control (Forge alone at Hephaestus's evaluation budget)."""
from __future__ import annotations

import numpy as np
import pytest

from stages.hephaestus_qosd import cvae, evaluate, qosd
from stages.hephaestus_qosd.prepare import seed_graphs
from stages.hephaestus_qosd.train import train_seed


@pytest.fixture(scope="module")
def smoke():
    """The smoke profile's params, with one torch thread as the stages run (restored after)."""
    import torch

    from stages.common.runtime.params import load_study
    from stages.hephaestus_qosd.params import PARAMS

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_study("hephaestus_qosd", PARAMS, profile="smoke")[1]
    torch.set_num_threads(before)


def run_seed(p, seed: int) -> tuple[list, dict]:
    """One seed through the stages' functions: (evaluate's rows, train's figures)."""
    g = seed_graphs(p.prepare, seed)
    tr = train_seed(g["train"], p.prepare.costs, p.train, p.forge, seed, progress=False)
    rows, _ = evaluate.evaluate_seed(g["test"], p.prepare.costs, tr["model"], cvae.initial_model(p.train, seed).eval(),
                                     p.evaluate, p.forge, seed)
    return rows, tr["figures"]


@pytest.fixture(scope="module")
def two_seeds(smoke):
    """Seeds 0 then 1 in one process, as run_seeds runs them."""
    from stages.common.seeds import run_seeds

    return run_seeds([0, 1], lambda s: run_seed(smoke, s), what="seed")


def costs_of(rows: list) -> list:
    return [(r["instance"], r["method"], r["cost_value"]) for r in rows]


def test_a_seeds_figures_depend_on_that_seed_alone(smoke, two_seeds):
    alone, figures = run_seed(smoke, 1)                   # seed 1 without seed 0 before it
    assert costs_of(alone) == costs_of(two_seeds[1][0])
    assert figures == two_seeds[1][1]
    assert costs_of(two_seeds[0][0]) != costs_of(two_seeds[1][0])     # the seed moves the figures
    g0, g1 = seed_graphs(smoke.prepare, 0), seed_graphs(smoke.prepare, 1)
    assert [g.w.tolist() for g in g0["test"]] != [g.w.tolist() for g in g1["test"]]
    assert [g.w.tolist() for g in seed_graphs(smoke.prepare, 0)["test"]] == [g.w.tolist() for g in g0["test"]]


def test_every_method_is_feasible_by_construction(smoke, two_seeds):
    """The retired must feasible_all_instances: every returned perturbation passes the Dijkstra
    check, on every seed, method and instance (evaluate_seed stops otherwise, see below)."""
    for rows, _ in two_seeds.values():
        assert {r["method"] for r in rows} == {*evaluate.METHODS, "optimum"}
        assert all(r["feasible"] for r in rows)
        for r in rows:
            if r["method"] == "optimum":
                continue
            best = min(x["cost_value"] for x in rows if x["instance"] == r["instance"] and x["method"] == "optimum")
            assert r["cost_value"] >= best * (1 - 1e-6)                  # nothing beats the exact optimum


def test_the_stage_stops_on_an_infeasible_perturbation(smoke, monkeypatch):
    real = evaluate.solve_all

    def broken(inst, *args, **kw):
        out = real(inst, *args, **kw)
        out["hephaestus"] = np.zeros(inst.m)                # no raise: every s-t path stays below T
        return out

    monkeypatch.setattr(evaluate, "solve_all", broken)
    g = seed_graphs(smoke.prepare, 0)
    model = cvae.initial_model(smoke.train, 0).eval()
    with pytest.raises(RuntimeError, match="hephaestus's perturbation of .* fails the Dijkstra check"):
        evaluate.evaluate_seed(g["test"][:1], smoke.prepare.costs, model, model, smoke.evaluate, smoke.forge, 0)


def test_the_searches_spend_hephaestus_budget_and_keep_the_best(smoke):
    """greedy_search and forge_search evaluate iterations x batch repaired candidates, as Refine
    does, and never return anything costlier than where they started."""
    rng = np.random.default_rng(5)
    budget = smoke.evaluate.refine.iterations * smoke.evaluate.refine.batch
    for kind in ("quadratic", "fixed_charge"):
        inst = qosd.make_instance("b", "waxman", 12, 1.5, rng, kind)
        gt = qosd.greedy_trim(inst)
        trace: list = []
        gs = qosd.local_search(inst, gt, budget, np.random.default_rng(0), fix=qosd.greedy_repair, trace=trace)
        assert len(trace) == budget and qosd.is_feasible(inst, gs)
        assert inst.cost(gs) == trace[-1] <= inst.cost(gt) + 1e-9
        assert all(a >= b for a, b in zip(trace, trace[1:]))
        assert inst.cost(gt) <= inst.cost(qosd.greedy_pathperturb(inst)) + 1e-9


def test_per_seed_layout_and_every_claim_reads_every_seed(smoke, two_seeds):
    from stages.common.seeds import per_seed_metrics
    from tests.helpers import assert_claims_read_every_seed

    metrics = per_seed_metrics({s: evaluate.summarise(rows, smoke.prepare.costs) for s, (rows, _) in two_seeds.items()})
    assert metrics["seeds"] == [0, 1] and set(metrics["per_seed"]) == {"0", "1"}
    one = metrics["per_seed"]["0"]["quadratic"]
    assert one["greedy_search"]["ratio_vs_greedy_search_mean"] == 1.0
    assert metrics["quadratic"]["hephaestus"]["ratio_vs_greedy_search_mean"] == pytest.approx(np.mean(
        [metrics["per_seed"][s]["quadratic"]["hephaestus"]["ratio_vs_greedy_search_mean"] for s in ("0", "1")]))
    assert_claims_read_every_seed("hephaestus_qosd", metrics, [0, 1])


def test_summarise_by_hand():
    """Two instances of one kind: the paired ratios and the gap, worked by hand."""
    rows = []
    for inst, costs in (("a/quadratic", {"greedy": 4.0, "greedy_trim": 4.0, "greedy_search": 2.0, "forge": 2.0,
                                         "forge_search": 1.0, "hephaestus": 1.0, "optimum": 1.0}),
                        ("b/quadratic", {"greedy": 8.0, "greedy_trim": 6.0, "greedy_search": 4.0, "forge": 4.0,
                                         "forge_search": 2.0, "hephaestus": 3.0, "optimum": 2.0})):
        for m, c in costs.items():
            row = {"instance": inst, "cost": "quadratic", "method": m, "cost_value": c, "feasible": True,
                   "optimal": m == "optimum"}
            if m == "hephaestus":
                row.update(first_batch=c, search_first_batch=2 * c)
            rows.append(row)
    s = evaluate.summarise(rows, ["quadratic"])
    h = s["quadratic"]["hephaestus"]
    assert h["ratio_vs_greedy_search_mean"] == pytest.approx((0.5 + 0.75) / 2)
    assert h["ratio_vs_greedy_trim_mean"] == pytest.approx((0.25 + 0.5) / 2)
    assert h["ratio_vs_forge_search_mean"] == pytest.approx((1.0 + 1.5) / 2)
    assert h["gap_to_optimum_mean"] == pytest.approx(0.25) and h["gap_to_optimum_max"] == pytest.approx(0.5)
    assert h["not_worse_than_greedy_search"] == 1.0
    assert s["quadratic"]["first_batch"]["hephaestus_over_forge_search_mean"] == pytest.approx(0.5)
    assert s["nonlinear"]["hephaestus"]["ratio_vs_forge_search_mean"] == pytest.approx(1.25)
    assert s["hephaestus_gap_to_optimum_nonlinear_mean"] == pytest.approx(0.25)


def planted(heph: list, control: list) -> dict:
    """A metrics file whose must figures (quadratic and fixed charge) are ``heph`` per seed and
    whose control figures are ``control``."""
    per = {}
    for i, (h, c) in enumerate(zip(heph, control)):
        arms = {"hephaestus": {"ratio_vs_greedy_search_mean": h, "ratio_vs_forge_search_mean": h / c},
                "forge_search": {"ratio_vs_greedy_search_mean": c}}
        per[str(i)] = {"quadratic": arms, "fixed_charge": arms}
    return {"per_seed": per}


@pytest.mark.parametrize("control, verdict", [([1.02, 1.01, 1.03, 0.99, 1.04], "holds"),
                                              ([0.90, 0.91, 0.89, 0.92, 0.90], "not specific")])
def test_a_must_holds_only_when_its_control_does_not(control, verdict):
    from pathlib import Path

    from stages.common.claims import evaluate as judge_claims, load_claims

    cf = load_claims(Path(__file__).resolve().parents[2] / "stages/hephaestus_qosd/claims.yaml")
    rows = {r["id"]: r for r in judge_claims(cf, planted([0.90, 0.91, 0.92, 0.90, 0.89], control), [0, 1, 2, 3, 4])}
    musts = [c for c in cf.claims if c.level == "must" and not c.retired]
    assert musts and all(c.control for c in musts)
    for c in musts:
        assert rows[c.id]["verdict"] == verdict, c.id
