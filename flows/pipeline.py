"""The claimbench pipeline as a Prefect flow, driven by dvc.yaml (never a second copy of the DAG).

    python -m flows.pipeline [--profile smoke] [target ...]

1. Ask DVC which stages are stale (``dvc status``) and add everything downstream of them.
2. Create the MLflow store and experiments once, then open a parent run for this flow run.
3. Submit one Prefect task per stale stage in dependency order; a task waits only for its
   own upstream stages, so independent stages run concurrently. Each task runs the stage's
   ``cmd`` from dvc.yaml in a subprocess (the stage run nests under the parent MLflow run)
   and then records it with ``dvc commit`` — one commit at a time, because DVC holds a
   repository lock — so dvc.lock and the cache are updated exactly as ``dvc repro`` would.
4. Afterwards ``dvc status`` is clean and ``dvc repro`` does nothing.

Stages with ``meta: {gpu: true}`` in dvc.yaml run with the Prefect tag ``gpu``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.task_runners import ThreadPoolTaskRunner

from stages.common.dvcfile import load_stages, upstream
from stages.common.params import repo_root

_DVC_LOCK = threading.Lock()   # `dvc commit` / `dvc status` take DVC's repo lock: one at a time
GPU_TAG = "gpu"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("DVC_NO_ANALYTICS", "1")
    env.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    env.setdefault("DO_NOT_TRACK", "true")
    env.pop("MLFLOW_RUN_ID", None)  # it would override the parent of every stage run
    return env


def _dvc(*args: str, root: Path) -> subprocess.CompletedProcess:
    with _DVC_LOCK:
        return subprocess.run(["dvc", *args], cwd=root, env=_env(), capture_output=True, text=True)


def set_profile(root: Path, profile: str) -> None:
    """Set ``common.profile`` in params.yaml (what ``dvc exp run -S common.profile=...`` applies)."""
    path = root / "params.yaml"
    text = path.read_text()
    new, n = re.subn(r"(?m)^(common:\s*\n(?:[ \t]+.*\n)*?[ \t]+profile:[ \t]*)([A-Za-z_]+)",
                     lambda m: m.group(1) + profile, text, count=1)
    if n != 1:
        raise ValueError("params.yaml: could not find common.profile to set")
    if new != text:
        path.write_text(new)


def stale_stages(root: Path, targets: list[str] | None = None) -> list[str]:
    """Stages to run, in dependency order: what dvc status reports, plus what lies downstream."""
    stages = load_stages(root)
    edges = upstream(stages)
    res = _dvc("status", "--json", root=root)
    if res.returncode != 0:
        raise RuntimeError(f"dvc status failed:\n{res.stderr}")
    changed = set(json.loads(res.stdout or "{}"))
    changed = {c.split(":")[-1] for c in changed} & set(stages)
    order = topological(stages, edges)
    stale: set[str] = set()
    for name in order:
        if name in changed or edges[name] & stale:
            stale.add(name)
    if targets:
        unknown = sorted(set(targets) - set(stages))
        if unknown:
            raise ValueError(f"unknown stage(s) {unknown}; dvc.yaml has {sorted(stages)}")
        wanted: set[str] = set()
        todo = list(targets)
        while todo:
            n = todo.pop()
            if n not in wanted:
                wanted.add(n)
                todo.extend(edges[n])
        stale &= wanted
    return [n for n in order if n in stale]


def topological(stages, edges) -> list[str]:
    order: list[str] = []
    seen: set[str] = set()

    def visit(n: str) -> None:
        if n in seen:
            return
        seen.add(n)
        for u in sorted(edges[n]):
            visit(u)
        order.append(n)

    for n in stages:
        visit(n)
    return order


def study_of(stage_name: str) -> str:
    return stage_name.split("-")[0]


@task(retries=1, retry_delay_seconds=5, task_run_name="{name}")
def run_stage(name: str, cmd: str, root: str, parent_run_id: str | None) -> dict:
    """Run one dvc.yaml stage's command, then record it in dvc.lock with `dvc commit`."""
    log = get_run_logger()
    env = _env()
    if parent_run_id:
        env["CLAIMBENCH_PARENT_RUN_ID"] = parent_run_id
    t0 = time.perf_counter()
    log.info("stage %s: %s", name, cmd)
    proc = subprocess.run(cmd, shell=True, cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    for line in (proc.stdout + proc.stderr).splitlines()[-20:]:
        log.info("  %s | %s", name, line)
    if proc.returncode != 0:
        raise RuntimeError(f"stage {name} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    res = _dvc("commit", "--force", name, root=Path(root))
    if res.returncode != 0:
        raise RuntimeError(f"dvc commit {name} failed:\n{res.stderr}")
    return {"stage": name, "wall_s": wall}


@flow(name="claimbench-pipeline", task_runner=ThreadPoolTaskRunner(max_workers=4),
      log_prints=True)
def pipeline(profile: str | None = None, targets: list[str] | None = None) -> dict:
    """Run the stale stages of dvc.yaml (optionally only ``targets`` and their upstream)."""
    from stages.common import tracking

    root = repo_root()
    if profile:
        set_profile(root, profile)
    stages = load_stages(root)
    edges = upstream(stages)
    todo = stale_stages(root, targets)
    print(f"stale stages: {todo or 'none'}")
    if not todo:
        return {"ran": [], "failed": [], "parent_run_id": None}

    for exp in {study_of(n) for n in todo} | {"pipeline"}:
        tracking.ensure_experiment(exp, root)       # create store + experiments before fanning out
    parent = tracking.open_flow_run("flow", {"profile": profile or "", "stages": ",".join(todo)}, root)
    futures = {}
    t0 = time.perf_counter()
    for name in todo:
        s = stages[name]
        opts = {"tags": [GPU_TAG]} if s.gpu else {}
        futures[name] = run_stage.with_options(**opts).submit(
            name, s.cmd, str(root), parent, wait_for=[futures[u] for u in edges[name] if u in futures])
    ran, failed = [], []
    for name, fut in futures.items():
        try:
            ran.append(fut.result())
        except Exception as exc:  # noqa: BLE001 - reported, the flow fails below
            failed.append(name)
            print(f"stage {name} did not complete: {str(exc).splitlines()[0]}")
    c = tracking.client(root)
    c.log_metric(parent, "flow.wall_s", time.perf_counter() - t0)
    c.log_metric(parent, "flow.stages_ran", len(ran))
    c.log_metric(parent, "flow.stages_failed", len(failed))
    if (root / "dvc.lock").exists():
        c.log_artifact(parent, str(root / "dvc.lock"))
    c.set_terminated(parent, "FAILED" if failed else "FINISHED")
    if failed:
        raise RuntimeError(f"stages failed: {failed}")
    return {"ran": [r["stage"] for r in ran], "failed": failed, "parent_run_id": parent}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", choices=["smoke", "default", "paper"])
    ap.add_argument("targets", nargs="*")
    a = ap.parse_args(argv)
    result = pipeline(profile=a.profile, targets=a.targets or None)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    sys.exit(main())
