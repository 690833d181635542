"""Fixtures of the hephaestus_qosd tests."""
from __future__ import annotations

