"""Fixtures of the efg_altpg tests: the games' sequence forms, built once per session."""
from __future__ import annotations

from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def kuhn():
    import pyspiel

    from stages.efg_altpg.seqform import build

    game = pyspiel.load_game("kuhn_poker")
    return game, build(game)


@pytest.fixture(scope="session")
def leduc():
    import pyspiel

    from stages.efg_altpg.seqform import build

    game = pyspiel.load_game("leduc_poker")
    return game, build(game)
