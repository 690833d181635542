"""The ledger's table of studies, and its place in README.md between the markers."""
from __future__ import annotations

import json
from pathlib import Path

from stages.ledger.build import END, START, refresh_readme, studies_table

REPO = Path(__file__).resolve().parents[2]


def _row(study, cid, level, holds, fidelity="faithful"):
    return {"study": study, "id": cid, "level": level, "holds": holds, "fidelity": fidelity,
            "source": f"Paper of {study} (NeurIPS 2025)"}


def test_table_counts_claims_held_per_level():
    rows = [_row("b_study", "x", "must", True), _row("b_study", "y", "must", False),
            _row("b_study", "z", "should", None, "proxy"), _row("a_study", "w", "must", None)]
    lines = studies_table(rows).splitlines()
    assert lines[0] == "| study | paper | must claims held | should claims held | fidelity |"
    assert lines[2] == "| [a_study](stages/a_study/README.md) | Paper of a_study (NeurIPS 2025) | 0 of 1 (1 not run) | — | faithful |"
    assert lines[3] == ("| [b_study](stages/b_study/README.md) | Paper of b_study (NeurIPS 2025) | 1 of 2 | "
                        "0 of 1 (1 not run) | faithful, proxy |")


def test_refresh_replaces_only_between_the_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nprose\n\n{START}\nold table\n{END}\n\nafter\n")
    assert refresh_readme(readme, "| new |\n")
    assert readme.read_text() == f"# title\n\nprose\n\n{START}\n| new |\n{END}\n\nafter\n"
    assert not refresh_readme(readme, "| new |\n")               # unchanged: nothing written
    readme.write_text("# no markers\n")
    assert not refresh_readme(readme, "| new |\n") and readme.read_text() == "# no markers\n"
    assert not refresh_readme(tmp_path / "missing.md", "x")


def test_the_committed_readme_holds_the_table_of_the_committed_ledger():
    """README.md's table is what the ledger writes from reports/claims.json (so `dvc repro` and git agree)."""
    rows = json.loads((REPO / "reports/claims.json").read_text())
    text = (REPO / "README.md").read_text()
    assert START in text and END in text
    assert text.split(START, 1)[1].split(END, 1)[0] == "\n" + studies_table(rows)
    for study in sorted({r["study"] for r in rows}):
        assert (REPO / "stages" / study / "README.md").is_file(), study


def test_no_claim_ignores_its_seed_unless_it_says_so():
    """VERDICTS.md section 2: a claim of contract v2 that shows the same value on every verdict
    seed must declare `deterministic: true` (an every_seed property may be constant: zero
    violations on every seed); a stage that ignores its seed would otherwise look certain."""
    rows = json.loads((REPO / "reports/claims.json").read_text())
    constant = [f"{r['study']}/{r['id']}" for r in rows if r.get("contract") == 2 and r.get("constant")]
    assert constant == [], f"the same value on every seed, not declared deterministic: {constant}"


def test_a_seed_ignoring_claim_is_flagged():
    from stages.common.claims import ClaimsFileV2, evaluate

    cf = ClaimsFileV2.model_validate({"study": "s", "paper": "P", "metrics": "m.json", "contract": 2, "claims": [
        dict(id="c", statement="s", paper="p", where="w", metric="x", op=">", threshold=0.0, level="should",
             fidelity="faithful", registered="2026-12-06")]})
    (row,) = evaluate(cf, {"per_seed": {"0": {"x": 1.0}, "1": {"x": 1.0}}}, [0, 1])
    assert row["constant"] is True


def test_a_floor_said_so_is_not_flagged():
    """A seed-dependent figure at a floor on every seed (no success on any) says why: constant_why."""
    from stages.common.claims import ClaimsFileV2, evaluate

    claim = dict(id="c", statement="s", paper="p", where="w", metric="x", op=">=", threshold=0.9, level="should",
                 fidelity="faithful", registered="2026-12-06")
    metrics = {"per_seed": {"0": {"x": 0.0}, "1": {"x": 0.0}}}
    for why, flagged in (("", True), ("no success on any seed: a floor", False)):
        cf = ClaimsFileV2.model_validate({"study": "s", "paper": "P", "metrics": "m.json", "contract": 2,
                                          "claims": [{**claim, "constant_why": why}]})
        (row,) = evaluate(cf, metrics, [0, 1])
        assert row["constant"] is flagged and row["verdict"] == "fails"
