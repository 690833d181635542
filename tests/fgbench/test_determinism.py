"""fgbench end to end on the smoke profile: in the session's smoke build its stages run once more give
the same outputs; `source: hub` on the committed fixture runs the same stages (a fresh copy)."""
from __future__ import annotations


import pytest

from tests.helpers import run_chain, set_params

from .conftest import FIXTURE, REPO

CHAIN = ("stages.fgbench.prepare", "stages.fgbench.train", "stages.fgbench.evaluate")


def _chain(root, env, python_exe) -> dict:
    return run_chain(root, env, python_exe, CHAIN, "fgbench", ("prepare", "train", "metrics"))


# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/fgbench/text_model/MLmodel",)


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    first = rerun_study("fgbench", volatile=VOLATILE)
    root, m = first["root"], first["metrics"]
    assert m["counts"]["types_present"] == 9 and m["fg"]["mismatches"] == 0 and m["split"]["leaks"] == 0
    assert (root / "data/fgbench/card.md").read_text().startswith("# fgbench data card")
    assert (root / "reports/fgbench/by_type.png").stat().st_size > 10_000


@pytest.mark.study
def test_hub_source_on_the_fixture(tmp_path, stage_env, python_exe):
    """The published-data path: `source: hub` with hub_name = the committed fixture (offline)."""
    from stages.common.runtime.checkout import copy_checkout

    root = copy_checkout(REPO, tmp_path / "repo", profile="smoke")
    set_params(root, {"fgbench.smoke.prepare.source": "hub", "fgbench.smoke.prepare.hub_name": str(FIXTURE)})
    out = _chain(root, stage_env, python_exe)
    assert out["prepare"]["source"] == "hub"
    assert out["prepare"]["questions"] == {"train": 18, "test": 9}
    assert out["metrics"]["counts"]["types_present"] == 9
    assert out["metrics"]["fg"]["mismatches"] == 0
