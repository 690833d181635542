"""Fixtures of the purpcode tests."""
from __future__ import annotations

