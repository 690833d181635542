"""Prefect deployments of the pipeline flow, declared here and created with ``flow.deploy``.

    claimbench deploy [--only NAME] [--gpu-schedule]     # PREFECT_API_URL -> a real server

| deployment | work pool | schedule | parameters |
|---|---|---|---|
| ``claimbench-pipeline/nightly`` | ``claimbench`` (process) | 03:00 UTC daily | profile=default |
| ``claimbench-pipeline/paper-gpu`` | ``claimbench-gpu`` (process) | Sat 04:00 UTC, off unless ``--gpu-schedule`` | profile=paper, gpu_only |

Both run the flow from this checkout (the work pool's ``working_dir``); a profile other than the
one params.yaml names runs in that profile's own workspace (``.claimbench/profiles/<profile>/``,
flows/workspace.py), so a scheduled run never edits the checkout's files. A worker on another
machine runs them in that machine's clone once ``claimbench deploy`` has been run there
(see the README, "Running on GPU nodes"). Each deployment runs one flow run at a time
(deployment concurrency limit 1, later runs wait), and the flow also takes a workspace
lock. Which stages want a GPU is not listed here: dvc.yaml marks them (``meta: {gpu: true}``).
With a default DVC remote (``claimbench remote add``) every run pulls before it plans and pushes
what it ran, so machines share results instead of recomputing them.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stages.common.runtime.params import repo_root

FLOW_ENTRYPOINT = "flows/pipeline.py:pipeline"
FLOW_NAME = "claimbench-pipeline"
CPU_POOL, GPU_POOL = "claimbench", "claimbench-gpu"


@dataclass(frozen=True)
class DeploymentSpec:
    name: str
    work_pool: str
    cron: str
    parameters: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    schedule_active: bool = True


DEPLOYMENTS: tuple[DeploymentSpec, ...] = (
    DeploymentSpec(
        name="nightly", work_pool=CPU_POOL, cron="0 3 * * *",
        parameters={"profile": "default", "targets": None},
        description="Every night: the stale stages of dvc.yaml on the default profile, then the "
                    "ledger. Trigger with other parameters (profile, targets) from the UI or "
                    "`claimbench stack run`."),
    DeploymentSpec(
        name="paper-gpu", work_pool=GPU_POOL, cron="0 4 * * 6",
        parameters={"profile": "paper", "targets": None, "gpu_only": True},
        description="Weekly on a GPU node: the GPU-marked stages on the paper profile. It pulls their "
                    "inputs from the DVC remote (computing only what the remote lacks) and pushes "
                    "what it ran; the ledger then runs where all metrics are. Its schedule is off "
                    "unless deployed with --gpu-schedule (a schedule with no GPU worker only piles "
                    "up late runs).",
        schedule_active=False),
)


def ensure_pool(client, name: str) -> None:
    """Create a ``process`` work pool named ``name`` if it does not exist."""
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound
    from prefect.workers.process import ProcessWorker

    try:
        client.read_work_pool(name)
    except ObjectNotFound:
        client.create_work_pool(WorkPoolCreate(
            name=name, type="process",
            base_job_template=ProcessWorker.get_default_base_job_template(),
            description="claimbench pipeline runs" + (" on GPU nodes" if name == GPU_POOL else "")))


def deploy(root: Path | None = None, only: list[str] | None = None,
           gpu_schedule: bool = False) -> list[str]:
    """Create or update the deployments (and their work pools); returns their full names."""
    from prefect import flow as prefect_flow
    from prefect.client.orchestration import get_client
    from prefect.runner.storage import LocalStorage
    from prefect.schedules import Cron

    root = (root or repo_root()).resolve()
    specs = [d for d in DEPLOYMENTS if not only or d.name in only]
    unknown = sorted(set(only or []) - {d.name for d in DEPLOYMENTS})
    if unknown:
        raise ValueError(f"unknown deployment(s) {unknown}; declared: "
                         f"{[d.name for d in DEPLOYMENTS]}")
    with get_client(sync_client=True) as client:
        for pool in sorted({d.work_pool for d in specs}):
            ensure_pool(client, pool)

    source = prefect_flow.from_source(source=LocalStorage(str(root)), entrypoint=FLOW_ENTRYPOINT)
    names = []
    for d in specs:
        active = d.schedule_active or (gpu_schedule and d.work_pool == GPU_POOL)
        source.deploy(
            name=d.name, work_pool_name=d.work_pool, description=d.description,
            schedules=[Cron(d.cron, timezone="UTC", active=active)],
            parameters=d.parameters, concurrency_limit=1, tags=["claimbench"],
            job_variables={"working_dir": str(root), "env": {"PYTHONPATH": str(root)}},
            build=False, push=False, print_next_steps=False, ignore_warnings=True)
        names.append(f"{FLOW_NAME}/{d.name}")
    return names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="deployment names (default: all)")
    ap.add_argument("--gpu-schedule", action="store_true",
                    help="turn on the GPU deployment's schedule (needs a GPU worker)")
    ap.add_argument("--root", type=Path, default=None, help="checkout the runs use (default: this one)")
    a = ap.parse_args(argv)
    for name in deploy(a.root, a.only, a.gpu_schedule):
        print(f"deployed {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
