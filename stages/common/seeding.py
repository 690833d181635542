"""Seeding: every random source a stage uses starts from ``common.seed``.

Kept apart from the stage wrapper (:mod:`stages.common.runtime.stage`, infrastructure) because it
shapes every stage's outputs: every stage lists this file as a dep in dvc.yaml.
"""
from __future__ import annotations

import random
import sys


def seed_everything(seed: int) -> None:
    """Seed Python's ``random``, NumPy's global generator and, when imported, torch."""
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:  # pragma: no cover
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)
