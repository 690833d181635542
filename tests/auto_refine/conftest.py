"""Fixtures of the auto_refine tests."""
from __future__ import annotations

from tests.common.conftest import params_copy, python_exe, real_params, stage_env  # noqa: F401 - shared fixtures
