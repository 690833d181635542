"""Fixtures of the escort_belief tests."""
from __future__ import annotations

from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
