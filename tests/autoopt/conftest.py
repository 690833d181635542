"""Fixtures of the autoopt tests."""
from __future__ import annotations

from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "data" / "fixtures" / "autoopt"
TYPE_WEIGHTS = {"single": 0.4, "multi": 0.2, "bilevel": 0.2, "stochastic": 0.2}
GEN = {"type_weights": TYPE_WEIGHTS, "complexity_rate": 0.35, "n_choices": [10, 20, 50, 100]}
