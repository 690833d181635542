"""Fixtures of the ensemble_tail tests."""
from __future__ import annotations

