"""The problems' maths against known answers: OR-Tools optima vs brute force / DP on tiny
instances, the checker's tour length vs the solver's, the FOARL rewards on hand-made outputs."""
from __future__ import annotations

import numpy as np
import pytest

from stages.llm_co_foarl import core
from stages.llm_co_foarl import problems as P
from stages.llm_co_foarl.solvers import solve_all


def test_ortools_tsp_optimum_equals_brute_force():
    rng = np.random.default_rng(3)
    inst = [P.random_tsp(rng, n) for n in (5, 6, 7, 8)]
    sols = solve_all("tsp", [p.tolist() for p in inst], workers=1)
    for pts, (tour, status) in zip(inst, sols):
        assert status == "OPTIMAL" and sorted(tour) == list(range(len(pts)))
        assert P.tour_length(pts, tour) == pytest.approx(P.brute_force_tsp(pts), rel=1e-6)


def test_ortools_knapsack_optimum_equals_dp():
    rng = np.random.default_rng(4)
    inst = [P.random_kp(rng, n) for n in (4, 8, 12, 16)]
    sols = solve_all("kp", [(it.tolist(), cap) for it, cap in inst], workers=1)
    for (items, cap), (chosen, value, status) in zip(inst, sols):
        assert status == "OPTIMAL" and value == P.dp_knapsack(items, cap)
        assert items[chosen, 0].sum() <= cap and items[chosen, 1].sum() == value


def test_square_tour_by_hand():
    pts = np.array([[0, 0], [10, 0], [10, 10], [0, 10]])
    assert P.tour_length(pts, [0, 1, 2, 3]) == pytest.approx(40.0)
    assert P.tour_length(pts, [0, 2, 1, 3]) == pytest.approx(20 + 20 * np.sqrt(2))
    assert P.brute_force_tsp(pts) == pytest.approx(40.0)
    assert P.canonical_tour([2, 3, 0, 1]) == [0, 1, 2, 3, 0]
    assert P.canonical_tour([0, 3, 2, 1]) == [0, 1, 2, 3, 0]


def test_tsp_judge_and_reward():
    pts = np.array([[0, 0], [10, 0], [10, 10], [0, 10]])
    opt = 40.0
    best = P.judge_tsp([0, 1, 2, 3, 0, P.EOS], pts, opt)
    assert best["feasible"] and best["gap"] == 0 and best["reward"] == pytest.approx(2.0)
    worse = P.judge_tsp([0, 2, 1, 3, 0, P.EOS], pts, opt)
    gap = (20 + 20 * np.sqrt(2) - 40) / 40
    assert worse["gap"] == pytest.approx(gap) and worse["reward"] == pytest.approx(1 + 1 / (1 + gap))
    repeat = P.judge_tsp([0, 1, 1, 3, 0, P.EOS], pts, opt)          # parses, 3 of 4 nodes, closed
    assert not repeat["feasible"] and repeat["r_feas"] == pytest.approx(0.2 + 0.5 * 3 / 4 + 0.3)
    assert repeat["r_opt"] == pytest.approx(0.1 * repeat["r_feas"])
    assert P.judge_tsp([0, 1, 2, 3, 0], pts, opt)["reward"] == 0.0              # no EOS: does not parse
    assert P.judge_tsp([0, 1, 2, 9, 0, P.EOS], pts, opt)["reward"] == 0.0       # node 9 does not exist
    open_tour = P.judge_tsp([0, 1, 2, 3, P.EOS], pts, opt)                      # does not return
    assert not open_tour["feasible"] and open_tour["r_feas"] == pytest.approx(0.7)


def test_knapsack_judge_and_reward():
    items = np.array([[5, 10], [4, 40], [6, 30], [3, 50]])
    cap, opt = 10, P.dp_knapsack(np.array([[5, 10], [4, 40], [6, 30], [3, 50]]), 10)
    assert opt == 90
    ok = P.judge_kp([1, 3, P.EOS], items, cap, opt)
    assert ok["feasible"] and ok["gap"] == 0 and ok["reward"] == pytest.approx(2.0)
    part = P.judge_kp([3, P.EOS], items, cap, opt)
    assert part["gap"] == pytest.approx(40 / 90) and part["reward"] == pytest.approx(1 + 50 / 90)
    over = P.judge_kp([0, 1, 2, P.EOS], items, cap, opt)
    assert not over["feasible"] and over["reward"] == pytest.approx(0.2)
    assert P.judge_kp([1, 1, P.EOS], items, cap, opt)["reward"] == 0.0         # repeats an item
    assert P.judge_kp([P.EOS], items, cap, opt)["feasible"]                      # empty set is feasible


def test_augmentation_keeps_the_optimum():
    rng = np.random.default_rng(5)
    pts = P.random_tsp(rng, 7)
    tour = [0, 3, 1, 6, 2, 5, 4]
    row = {"pts": pts.tolist(), "tour": tour, "opt": P.tour_length(pts, tour)}
    for _ in range(10):
        new = core.augment("tsp", row, rng)
        assert P.tour_length(np.array(new["pts"]), new["tour"]) == pytest.approx(row["opt"])
        assert sorted(map(tuple, new["pts"])) != [] and len(new["pts"]) == 7
        tgt = core.target("tsp", new)
        assert P.judge_tsp(tgt, np.array(new["pts"]), row["opt"])["gap"] == pytest.approx(0.0, abs=1e-9)
    items, cap = P.random_kp(rng, 8)
    chosen = [1, 4]
    krow = {"items": items.tolist(), "cap": cap, "chosen": chosen, "opt": float(items[chosen, 1].sum())}
    new = core.augment("kp", krow, rng)
    assert np.array(new["items"])[new["chosen"], 1].sum() == krow["opt"]


def test_description_reads_as_text():
    pts = np.array([[12, 87], [40, 3]])
    assert P.detokenize(P.describe_tsp(pts)) == "TSP 2 nodes : 0 ( 12 , 87 ) ; 1 ( 40 , 3 ) ; SOL"
    items = np.array([[23, 41]])
    assert P.detokenize(P.describe_kp(items, 11)) == "KP 1 items cap 11 : 0 ( 23 , 41 ) ; SOL"
    with pytest.raises(ValueError, match="does not fit the number tokens"):
        P.describe_kp(items, 600)
