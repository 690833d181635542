"""Fixtures of the dima tests."""
from __future__ import annotations

