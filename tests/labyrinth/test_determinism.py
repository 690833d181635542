"""labyrinth end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, every smoke verdict seed has its own mazes and figures, and every
claim reads each seed's figures."""
from __future__ import annotations

import json

import pytest

from tests.helpers import assert_claims_read_every_seed


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("labyrinth", volatile=tuple(f"data/labyrinth/models/{m}/MLmodel" for m in ("bc_pyfunc", "dagger_pyfunc")))  # MLmodel: save time, uuid
    m = out["metrics"]
    assert m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"}
    assert all(m["per_seed"][s]["split_overlap"] == 0 and m["per_seed"][s]["expert_test_success"] == 1.0
               for s in ("0", "1"))
    assert_claims_read_every_seed("labyrinth", m, [0, 1])
    mazes = json.loads((out["root"] / "data/labyrinth/mazes.json").read_text())
    assert set(mazes) == {"0", "1"} and mazes["0"]["base"]["test"] != mazes["1"]["base"]["test"]
    assert all((out["root"] / f"data/labyrinth/models/seed{s}/{name}.pt").is_file()
               for s in (0, 1) for name in ("bc", "dagger", "bc_partial", "bc_key_door", "bc_ice"))
    assert (out["root"] / "reports/labyrinth/success.png").stat().st_size > 5_000
    assert (out["root"] / "reports/labyrinth/rollouts.gif").stat().st_size > 1_000
