"""Fixtures of the autosep tests."""
from __future__ import annotations

