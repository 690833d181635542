"""Fixtures of the coral_diffusion tests."""
from __future__ import annotations

