"""Fixtures of the escort_belief tests."""
from __future__ import annotations

from pathlib import Path

from tests.common.conftest import params_copy, python_exe, real_params, stage_env  # noqa: F401 - shared fixtures

REPO = Path(__file__).resolve().parents[2]
