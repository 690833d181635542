"""Fixtures of the llm_co_foarl tests."""
from __future__ import annotations

