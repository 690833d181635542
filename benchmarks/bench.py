"""What the benchmark scripts share: a clean environment, timed commands, stage timings."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator


def env(**extra: str) -> dict[str, str]:
    """This environment, offline and telemetry-free, with this venv's tools first on PATH."""
    e = dict(os.environ)
    e.update({"DVC_NO_ANALYTICS": "1", "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true",
              "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "HF_HUB_OFFLINE": "1",
              "HF_DATASETS_OFFLINE": "1", "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90"})
    e["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{e.get('PATH', '')}"
    for k in ("MLFLOW_TRACKING_URI", "DVC_ROOT", "MLFLOW_RUN_ID", "CLAIMBENCH_PARENT_RUN_ID"):
        e.pop(k, None)
    e.update(extra)
    return e


def timed(cmd: list[str], cwd: Path, quiet: bool = False, **extra_env: str) -> tuple[float, str]:
    """Run ``cmd`` in ``cwd``; return (wall seconds, stdout). Exits on failure."""
    if not quiet:
        print(f"  $ {' '.join(cmd)}", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env(**extra_env), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return wall, proc.stdout


def stage_metrics(root: Path) -> dict[str, dict[str, float]]:
    """The stage.* timings of the latest MLflow run of each stage in ``root``'s sqlite store."""
    from mlflow.tracking import MlflowClient

    c = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns.db'}")
    out: dict[str, dict[str, float]] = {}
    for e in c.search_experiments():
        for r in c.search_runs([e.experiment_id], order_by=["attributes.start_time ASC"]):
            if "dvc.stage" in r.data.tags and "stage.compute_s" in r.data.metrics:
                out[r.data.tags["dvc.stage"]] = {k: v for k, v in r.data.metrics.items()
                                                 if k.startswith("stage.")}
    return out


@contextlib.contextmanager
def scratch(prefix: str, keep: bool = False) -> Iterator[Path]:
    """A temporary folder for the benchmark's copies, and Prefect's home inside it (a fresh
    database: nothing from earlier flow runs, such as concurrency limits, can skew the timings);
    removed afterwards unless ``keep``."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    saved = os.environ.get("PREFECT_HOME")
    os.environ["PREFECT_HOME"] = str(path / "prefect")
    try:
        yield path
    finally:
        if saved is None:
            os.environ.pop("PREFECT_HOME", None)
        else:
            os.environ["PREFECT_HOME"] = saved
        if keep:
            print(f"kept {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)


def best_of(fn, repeats: int) -> tuple[float, object]:
    """The fastest of ``repeats`` calls of ``fn`` (seconds) and the last call's result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out
