"""Test-wide settings: offline switches, and every store (MLflow, Prefect, HF) in a temp folder."""
from __future__ import annotations

import os

import pytest

OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "true",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DVC_NO_ANALYTICS": "1",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
}


@pytest.fixture(autouse=True, scope="session")
def _offline_and_isolated(tmp_path_factory):
    base = tmp_path_factory.mktemp("stores")
    saved = dict(os.environ)
    os.environ.update(OFFLINE)
    os.environ["PREFECT_HOME"] = str(base / "prefect")
    os.environ["HF_HOME"] = str(base / "hf")
    os.environ.pop("MLFLOW_TRACKING_URI", None)
    os.environ.pop("MLFLOW_RUN_ID", None)
    os.environ.pop("DVC_ROOT", None)
    yield
    os.environ.clear()
    os.environ.update(saved)
