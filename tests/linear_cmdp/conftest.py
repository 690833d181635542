"""Fixtures of the linear_cmdp tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


REPO = Path(__file__).resolve().parents[2]


def binding(kind: str, seed0: int = 0, scale: float | None = None):
    """The first binding instance of the official generator (S=5, A=3, H=4) from ``seed0`` on."""
    from stages.linear_cmdp.cmdp import binding_gap, linear_cmdp, tabular_cmdp, with_threshold

    scale = scale or (0.6 if kind == "tabular" else 0.9)
    for i in range(seed0, seed0 + 200):
        rng = np.random.default_rng(i)
        m = tabular_cmdp(rng, 5, 3, 4) if kind == "tabular" else linear_cmdp(rng, 5, 3, 4, 2)
        m = with_threshold(m, scale)
        free, v_star, _ = binding_gap(m)
        if free - v_star > 1e-6:
            return m, v_star
    raise AssertionError("no binding instance")


@pytest.fixture(scope="module")
def tab_instance():
    return binding("tabular")


@pytest.fixture(scope="module")
def lin_instance():
    return binding("linear")
