"""Fixtures of the cdc_gs tests."""
from __future__ import annotations

