"""Fixtures of the attr_analogy tests."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.common.conftest import OFFLINE_ENV, params_copy, real_params  # noqa: F401 - shared fixtures

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def python_exe() -> str:
    return sys.executable


@pytest.fixture
def stage_env(tmp_path):
    """Environment for running a stage as a subprocess: offline, MLflow off, no DVC_ROOT."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DVC_ROOT", "MLFLOW_TRACKING_URI", "CLAIMBENCH_ARTIFACT_ROOT", "CLAIMBENCH_PARENT_RUN_ID")}
    env.update(OFFLINE_ENV)
    env["CLAIMBENCH_TRACKING"] = "off"
    env["OMP_NUM_THREADS"] = "1"
    return env
