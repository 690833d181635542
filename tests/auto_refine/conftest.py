"""Fixtures of the auto_refine tests."""
from __future__ import annotations

