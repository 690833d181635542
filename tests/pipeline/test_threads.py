"""Threads that fit the machine: two thread-hungry stages run side by side under the flow each get
their share of the cores, and the same stage under plain `dvc repro` gets all of them (never more).

The target is two scaffolded studies (``claimbench new-study``) whose train stage asks for far more
threads than the machine has (``limit_threads(default=64)``): independent chains, so the flow runs
them at once. Each stage run logs the cores it was given and the threads it applied to MLflow."""
from __future__ import annotations

import json
import os
import sys

import pytest

from .conftest import REPO, sh

pytestmark = pytest.mark.machinery

HUNGRY = ("hungry_a", "hungry_b")


def _train_runs(root, study):
    from mlflow.tracking import MlflowClient

    c = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns.db'}")
    exp = c.get_experiment_by_name(study)
    return c.search_runs([exp.experiment_id], filter_string=f"tags.`dvc.stage` = '{study}-train'",
                         order_by=["attributes.start_time DESC"])


def test_concurrent_stages_share_the_cores_and_dvc_repro_gives_them_all(tmp_path):
    from stages.common.runtime.checkout import copy_checkout

    root = copy_checkout(REPO, tmp_path / "repo", profile="smoke", only=[])
    cli = [sys.executable, "-m", "claimbench.cli"]
    for study in HUNGRY:
        sh([*cli, "new-study", study, "--title", "a thread-hungry stage"], root)
        train = root / f"stages/{study}/train.py"
        text = train.read_text().replace(
            "        from stages.common.io import write_json, write_npz\n",
            "        from stages.common.device import limit_threads\n"
            "        from stages.common.io import write_json, write_npz\n\n"
            "        limit_threads(default=64)   # asks for far more than any test machine has\n")
        assert "limit_threads(default=64)" in text
        train.write_text(text)
    sh([*cli, "deps", "--write"], root)
    sh(["git", "add", "-A"], root)
    sh(["git", "commit", "-qm", "two thread-hungry studies"], root)

    cores = len(os.sched_getaffinity(0))
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                             "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")}
    proc = sh([sys.executable, "-m", "flows.pipeline", "--profile", "smoke"], root, timeout=900, env=env)
    result = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert {f"{s}-train" for s in HUNGRY} <= set(result["ran"]) and result["failed"] == []
    width = min(cores, 2)                  # two independent chains, at most one stage per core
    share = max(1, cores // width)
    if width > 1:
        assert f"{width} independent branches on {os.cpu_count()} cores" in proc.stdout + proc.stderr
    for study in HUNGRY:
        (run, *_) = _train_runs(root, study)
        assert run.data.metrics["stage.cores_given"] == share
        assert run.data.metrics["stage.threads"] == share          # the cap, not the 64 it asked for

    # the same stage alone under plain `dvc repro`: every core the process may use, and no more
    sh(["dvc", "repro", "-f", "-s", "stages/hungry_a/dvc.yaml:hungry_a-train"], root, env=env)
    (latest, *_) = _train_runs(root, "hungry_a")
    assert latest.data.metrics["stage.cores_given"] == cores
    assert latest.data.metrics["stage.threads"] == cores
