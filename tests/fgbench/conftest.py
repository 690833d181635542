"""Fixtures of the fgbench tests."""
from __future__ import annotations

from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "data" / "fixtures" / "fgbench"
