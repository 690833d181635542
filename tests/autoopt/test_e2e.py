"""The end-to-end chain's pieces: when a solution counts as a success, which rows have a known
optimum, how the parts' metrics are merged, and the one-image tool's bad-input errors."""
from __future__ import annotations


import pytest

from stages.autoopt.chain.chain import Outcome, success
from stages.autoopt.chain.e2e import known_rows, section


def _solved(objective, feasible=True, violation=0.0):
    return Outcome("solved", solution={"objective": objective, "feasible": feasible,
                                       "max_violation": violation})


@pytest.mark.parametrize("outcome, optimum, expected", [
    (_solved(-3.0), -3.0, True),
    (_solved(-2.995), -3.0, True),           # |gap| 0.005 <= 0.01 * max(1, 3)
    (_solved(-2.9), -3.0, False),            # 0.1 > 0.03
    (_solved(0.005), 0.0, True),             # the tolerance is at least rel_tol (max(1, |opt|))
    (_solved(-3.5), -3.0, False),            # below a known optimum: not a success either
    (_solved(-3.0, feasible=False), -3.0, False),
    (_solved(-3.0, violation=1e-3), -3.0, False),
    (_solved(None), -3.0, False),
    (Outcome("translate", "no parse"), -3.0, False),
    (Outcome("timeout"), -3.0, False),
])
def test_success_needs_a_feasible_point_at_the_optimum(outcome, optimum, expected):
    assert success(outcome, optimum, 0.01) is expected


def test_success_is_none_without_a_known_optimum():
    assert success(_solved(1.0), None, 0.01) is None


def test_known_rows_keeps_dataset_order_and_the_cap():
    ds = {"optimum": [1.0, None, 2.0, 3.0, 4.0],
          "optimum_source": ["planted", "none", "highs", "none", "planted"]}
    assert known_rows(ds, 0) == [0, 2, 4]
    assert known_rows(ds, 2) == [0, 2]


def test_section_unwraps_a_part_nested_under_its_own_key():
    assert section({"m2": {"x": 1}, "loss": {"y": 2}}, "m2") == {"x": 1, "loss": {"y": 2}}
    assert section({"x": 1, "y": 2}, "m3") == {"x": 1, "y": 2}
    with pytest.raises(ValueError, match="'x' is both"):
        section({"m2": {"x": 1}, "x": 2}, "m2")


def _part(per: dict, nest: str = "", **shared):
    from stages.common.seeds import per_seed_metrics

    body = per_seed_metrics(per, **shared)
    return {nest: body} if nest else body


def test_merge_puts_every_part_of_a_seed_under_that_seed():
    """Each verdict seed's M1, M2, M3 and chain figures land under per_seed.<seed> with M2 and M3
    as sections (M2's own nesting removed), the means at the top, seed-free figures kept once."""
    from stages.autoopt.chain.e2e import merge

    m1 = _part({0: {"margin_bleu": {"printed": 2.0}}, 1: {"margin_bleu": {"printed": 4.0}}},
               retrieval={"printed": {"bleu": 50.0}})
    m2 = {"m2": {"rules": {"eq": 1.0}}, **{k: v for k, v in _part(
        {0: {"m2": {"rules": {"eq": 1.0}}, "seconds": 1.0}, 1: {"m2": {"rules": {"eq": 0.5}}, "seconds": 3.0}}).items()
        if k != "m2"}}
    m3 = _part({0: {"complex": {"margin_vs_ipopt": 0.1}}, 1: {"complex": {"margin_vs_ipopt": 0.3}}}, "m3",
               protocol={"budget": 3000})
    out = merge(m1, m2, m3, {0: {"success": {"printed": 0.0}}, 1: {"success": {"printed": 1.0}}})
    assert out["seeds"] == [0, 1]
    assert out["per_seed"]["1"]["margin_bleu"]["printed"] == 4.0
    assert out["per_seed"]["0"]["m2"]["rules"]["eq"] == 1.0 and out["per_seed"]["1"]["m2"]["seconds"] == 3.0
    assert out["per_seed"]["1"]["m3"]["complex"]["margin_vs_ipopt"] == 0.3
    assert out["per_seed"]["1"]["e2e"]["success"]["printed"] == 1.0
    assert out["margin_bleu"]["printed"] == 3.0 and out["m2"]["rules"]["eq"] == 0.75
    assert abs(out["m3"]["complex"]["margin_vs_ipopt"] - 0.2) < 1e-12
    assert out["retrieval"] == {"printed": {"bleu": 50.0}} and out["m3"]["protocol"] == {"budget": 3000}
    with pytest.raises(ValueError, match="verdict seeds"):
        merge(m1, m2, _part({0: {"complex": {}}}, "m3"), {0: {}, 1: {}})


def test_solve_tool_bad_input(tmp_path, capsys):
    from stages.autoopt.solve import main

    assert main([]) == 2
    assert "give an IMAGE or --latex" in capsys.readouterr().err
    assert main([str(tmp_path / "absent.png")]) == 2
    assert "no image file" in capsys.readouterr().err
    img = tmp_path / "f.png"
    img.write_bytes(b"not a png")
    assert main([str(img), "--model", str(tmp_path / "none.pt")]) == 2
    assert "run `dvc repro stages/autoopt/dvc.yaml:autoopt-m1-train` first" in capsys.readouterr().err
    assert main(["--latex", "x", "--budget", "1"]) == 2


def test_run_chain_solves_every_seed_in_one_batch_and_keeps_each_rows_outcome(monkeypatch):
    """All seeds' scripts (both splits, three sources) go to the sandbox in one call, each with its
    own verdict seed as BOBD's seed; each outcome comes back to the seed, split, source and row it
    was made for, in the CSV's order (seed, split, source, row)."""
    import datasets
    from types import SimpleNamespace

    from stages.autoopt.chain import chain, e2e

    def split(prefix, n):
        return datasets.Dataset.from_dict({
            "id": [f"{prefix}{k}" for k in range(n)], "latex": [f"latex {prefix}{k}" for k in range(n)],
            "pyomo": [f"pyomo {prefix}{k}" for k in range(n)], "optimum": [float(k) for k in range(n)],
            "optimum_source": ["planted"] * n, "tags": [{"type": "single"}] * n})
    dd = datasets.DatasetDict({"test": split("p", 3), "test_handwritten": split("h", 2)})
    preds = {"per_seed": {str(s): {"printed": [{"id": f"p{k}", "latex": f"m1 {s} p{k}"} for k in range(3)],
                                   "handwritten": [{"id": f"h{k}", "latex": f"m1 {s} h{k}"} for k in range(2)]}
                          for s in (0, 3)}}
    # a translator that keeps the text, so every script names where it came from
    monkeypatch.setattr(chain, "translate_all", lambda latex: [(f"script of {t}", "") for t in latex])
    calls = []

    def fake_solve(scripts, *, seed, **kw):
        calls.append((list(scripts), list(seed)))
        # objective = the known optimum exactly when BOBD's seed is 0: success only on seed 0
        return [chain.Outcome("solved", solution={"objective": float(sc[-1]) if s == 0 else -9.0,
                                                  "feasible": True, "max_violation": 0.0})
                for sc, s in zip(scripts, seed)]
    monkeypatch.setattr(chain, "solve_scripts", fake_solve)
    ep = SimpleNamespace(max_rows=0, budget=10, rel_tol=0.01, time_limit_s=5, memory_mb=256, workers=1)
    per_seed, rows = e2e.run_chain(dd, preds, ep, [0, 3])

    assert len(calls) == 1
    scripts, seeds = calls[0]
    assert len(scripts) == 2 * (3 + 2) * 3 and seeds == [0] * 15 + [3] * 15
    assert scripts[:3] == ["pyomo p0", "pyomo p1", "pyomo p2"]
    assert scripts[3:6] == ["script of latex p0", "script of latex p1", "script of latex p2"]
    assert scripts[15 + 6:15 + 9] == ["script of m1 3 p0", "script of m1 3 p1", "script of m1 3 p2"]
    assert [(r["seed"], r["split"], r["source"], r["id"]) for r in rows[:4]] == [
        (0, "printed", "reference_pyomo", "p0"), (0, "printed", "reference_pyomo", "p1"),
        (0, "printed", "reference_pyomo", "p2"), (0, "printed", "ground_truth_latex", "p0")]
    assert per_seed[0]["success"] == {"printed": 1.0, "handwritten": 1.0}
    assert per_seed[3]["success"] == {"printed": 0.0, "handwritten": 0.0}
    assert per_seed[3]["rows_with_known_optimum"]["handwritten"] == {"used": 2, "of": 2, "split_rows": 2}
