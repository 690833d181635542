"""Fixtures of the curriculum_rerm tests."""
from __future__ import annotations

