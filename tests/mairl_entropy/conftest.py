"""Fixtures of the mairl_entropy tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def small_games():
    """Three random 3-state 2x2 general-sum games (as the prepare stage makes them)."""
    from stages.mairl_entropy import games

    data = games.generate(7, 3, 3, (2, 2), 0.9, 0.0, 1.0, 1.0, 0.5, 1.5)
    return games.games_from(data)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
