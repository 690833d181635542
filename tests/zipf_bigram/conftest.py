"""Fixtures of the zipf_bigram tests."""
from __future__ import annotations

from pathlib import Path

import pytest
import json

from stages.zipf_bigram.model import SignTuning

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def tuning() -> SignTuning:
    """The sign-descent step grid of the default profile of stages/zipf_bigram/params.json."""
    g = json.loads((REPO / "stages/zipf_bigram/params.json").read_text())["zipf_bigram"]["default"]["train"]["sign_grid"]
    return SignTuning(g["lo"], g["hi"], g["size"], g["budget_ratio"])
