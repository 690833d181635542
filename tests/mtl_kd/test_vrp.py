"""mtl_kd maths: the feasibility checker on tiny cases by hand, the route cost against PyVRP's
own cost of the same routes, the construction environment's masks (every rollout feasible), and
R3C never making a solution longer or infeasible."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.mtl_kd import baseline, models, vrp


def tiny(open_=0, tw=0):
    """Depot at (0,0); customers at (1,0), (0,1), (1,1); demands 2, 2, 3; capacity 4."""
    inst = {"xy": np.array([[[0, 0], [1, 0], [0, 1], [1, 1]]], float),
            "demand": np.array([[0, 2, 2, 3]]), "window": np.zeros((1, 4, 2)),
            "capacity": np.array([4]), "open": np.array([open_]), "tw": np.array([tw])}
    inst["window"][:, :, 1] = vrp.HORIZON
    return inst


def test_checker_and_cost_by_hand():
    inst = tiny()
    routes = [[1, 2], [3]]                        # 1 + sqrt2 + 1  and  2 * sqrt2
    assert vrp.check_solution(inst, 0, routes) == []
    assert vrp.route_cost(inst, 0, routes) == pytest.approx(2 + 3 * np.sqrt(2))
    assert any("capacity" in p for p in vrp.check_solution(inst, 0, [[1, 3], [2]]))       # 5 > 4
    assert any("exactly once" in p for p in vrp.check_solution(inst, 0, [[1, 2]]))
    assert vrp.route_cost(tiny(open_=1), 0, routes) == pytest.approx(1 + np.sqrt(2) + np.sqrt(2))


def test_checker_time_windows_by_hand():
    inst = tiny(tw=1)                             # service 0.2, depot closes at 3.2
    assert vrp.check_solution(inst, 0, [[1], [2], [3]]) == []          # alone: 2.2, 2.2, 2 sqrt2 + 0.2
    inst["window"][0, 2] = [0.0, 2.0]             # via customer 1, customer 2 is reached at 1.2 + sqrt2 > 2
    assert any("customer 2" in p and "after its window ends" in p
               for p in vrp.check_solution(inst, 0, [[1, 2], [3]]))
    # 2 then 1: at customer 1 by 2.614, done 2.814, home at 3.814 > 3.2
    assert any("depot closes" in p for p in vrp.check_solution(inst, 0, [[2, 1], [3]]))
    inst["window"][0, 3] = [2.9, 3.0]             # wait till 2.9, done 3.1, home at 3.1 + sqrt2 > 3.2
    assert any("depot closes" in p for p in vrp.check_solution(inst, 0, [[1], [2], [3]]))
    inst["open"][0] = 1                           # open routes: no return deadline
    assert vrp.check_solution(inst, 0, [[2, 1], [3]]) == []


@pytest.mark.parametrize("variant", sorted(vrp.VARIANTS))
def test_route_cost_matches_pyvrp_on_its_own_solution(variant):
    inst = vrp.generate(variant, 12, 2, np.random.default_rng(1))
    for i in range(2):
        routes, cost, feasible = baseline.solve(inst, i, 100)
        assert feasible and vrp.check_solution(inst, i, routes, tol=1e-3) == []
        assert baseline.pyvrp_cost_of(inst, i, routes) == cost
        edges = sum(len(r) + 1 for r in routes)                          # each rounded by at most 0.5
        assert abs(vrp.route_cost(inst, i, routes) * baseline.SCALE - cost) <= 0.5 * edges


class _P:
    dim, layers, heads = 16, 1, 2


@pytest.mark.parametrize("kind", ["teacher", "student"])
def test_untrained_rollouts_are_feasible_and_costed_right(kind):
    torch.manual_seed(0)
    net = models.make(kind, _P())
    for variant in vrp.VARIANTS:
        inst = vrp.generate(variant, 10, 3, np.random.default_rng(2))
        with torch.no_grad():
            cost, _, acts, _ = models.rollout(net, inst, 4, greedy=False, gen=torch.Generator().manual_seed(0))
        for i in range(3):
            for s in range(4):
                routes = vrp.routes_from_actions(acts[i, s].tolist())
                assert vrp.check_solution(inst, i, routes, tol=1e-5) == []
                assert float(cost[i, s]) == pytest.approx(vrp.route_cost(inst, i, routes), rel=1e-5)


def test_r3c_never_worsens_and_stays_feasible():
    torch.manual_seed(0)
    net = models.make("student", _P())
    inst = vrp.generate("vrptw", 10, 3, np.random.default_rng(3))
    cost, routes = models.solve(net, inst)
    better = models.r3c(net, inst, routes, 4, 6, np.random.default_rng(0))
    for i in range(3):
        assert vrp.check_solution(inst, i, better[i], tol=1e-5) == []
        assert vrp.route_cost(inst, i, better[i]) <= cost[i] + 1e-5


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="unknown VRP variant 'tsp'"):
        vrp.generate("tsp", 10, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown model kind"):
        models.make("critic", _P())


def test_the_compact_student_scores_as_the_full_one():
    """The student's compact decoder (only the customers left get token slots) and the full one
    (every customer a slot, the visited masked) give the same scores at every move and the same
    greedy tours: the layers have no positional encoding."""
    torch.manual_seed(1)
    net = models.make("student", _P())
    for variant in ("cvrp", "ovrptw"):
        inst = vrp.generate(variant, 12, 3, np.random.default_rng(4))
        env = vrp.Env(inst, 5)
        env.step(models.starts_for(inst, 5))
        with torch.no_grad():
            cache = net.encode(torch.as_tensor(vrp.features(inst)))
            while not env.finished():
                net.compact = False
                full = net.logits(cache, env)
                net.compact = True
                compact = net.logits(cache, env)
                live = torch.isfinite(full)
                assert torch.equal(live, torch.isfinite(compact))
                assert torch.allclose(full[live], compact[live], atol=1e-5)
                env.step(full.argmax(-1))
        net.compact = False
        tours_full = models.solve(net, inst)[1]
        net.compact = True
        assert models.solve(net, inst)[1] == tours_full


def test_the_mlflow_student_carries_its_signature_and_example_and_solves_as_the_stage(tmp_path):
    """The pyfunc (stages/mtl_kd/pyfunc.py) saved with real instances as its example: MLflow
    infers the signature from them, and the loaded model gives models.solve's costs and routes."""
    import json

    import mlflow.pyfunc
    from mlflow.models import Model

    torch.manual_seed(0)
    net = models.make("student", _P()).eval()
    (tmp_path / "w").mkdir()
    models.save_weights(tmp_path / "w", {"student": net}, {"student": {"dim": 16, "layers": 1, "heads": 2},
                                                          "nets": {"student": "student"}})
    inst = vrp.concat([vrp.generate(v, 6, 1, np.random.default_rng(k)) for k, v in enumerate(vrp.VARIANTS)])
    models.save_mlflow(tmp_path / "m", tmp_path / "w", vrp.take(inst, [0, 2]))
    meta = Model.load(str(tmp_path / "m"))
    assert [c.name for c in meta.signature.outputs.inputs] == ["cost", "routes"]
    assert len(meta.load_input_example(str(tmp_path / "m"))) == 2
    frame = models.frame_from_instances(inst)
    assert all(np.array_equal(a, b) for a, b in zip(models.instances_from_frame(frame).values(), inst.values()))
    got = mlflow.pyfunc.load_model(str(tmp_path / "m")).predict(frame)
    cost, routes = models.solve(net, inst)
    assert np.allclose(got["cost"], cost) and [json.loads(r) for r in got["routes"]] == routes
