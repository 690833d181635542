"""The MLflow side of a flow run, and the only module of the flow that talks to MLflow: the
store and experiments made before stages fan out, the flow run's own run (experiment
``pipeline``) and, in each study's experiment, a run standing for it under which that study's
stage runs nest (the MLflow UI nests runs only within an experiment)."""
from __future__ import annotations

import time
from pathlib import Path

from stages.common.runtime import tracking

from .plan import flow_studies
from .procs import study_of


def ensure_experiments(root: Path, studies: list[str]) -> None:
    """Create the MLflow store and the experiments a flow run logs to, before stages fan out."""
    for exp in [*studies, "pipeline"]:
        tracking.ensure_experiment(exp, root)


def reap(stage_name: str, root: Path) -> None:
    """Mark FAILED the MLflow run of a stage that was killed (it could not close its run)."""
    try:
        c = tracking.client(root)
        exp = c.get_experiment_by_name(study_of(stage_name))
        if exp is not None:
            tracking.reap_orphans(c, exp.experiment_id)
    except Exception as exc:  # noqa: BLE001 - bookkeeping must not hide the stage's failure
        print(f"could not mark the MLflow run of {stage_name} FAILED: {exc}")


def prefect_tags() -> dict[str, str]:
    """The Prefect flow run (and deployment) this MLflow run belongs to."""
    try:
        from prefect.runtime import deployment, flow_run

        tags = {"prefect.flow_run_id": str(flow_run.id or ""),
                "prefect.flow_run_name": str(flow_run.name or "")}
        if deployment.name:
            tags["prefect.deployment"] = str(deployment.name)
        return {k: v for k, v in tags.items() if v}
    except Exception:  # noqa: BLE001 - tags are a convenience
        return {}


class FlowRuns:
    """One flow run's MLflow runs: its run in experiment ``pipeline`` and, in each study's
    experiment, a run standing for it, under which that study's stage runs nest."""

    def __init__(self, root: Path, todo: list[str], profile: str | None):
        self.root = root
        studies = flow_studies(todo)               # their experiments: made by ensure_experiments
        tags = {"profile": profile or "", "stages": ",".join(todo), **prefect_tags()}
        name = f"flow {tags.get('prefect.flow_run_name', time.strftime('%Y-%m-%d %H:%M'))}"
        self.parent = tracking.open_flow_run(name, tags, root)
        self.study_parent = {s: tracking.open_study_parent(s, self.parent, name, root) for s in studies}
        self.t0 = time.perf_counter()

    def parent_of(self, stage_name: str) -> str | None:
        """The run a stage's run nests under (its study's run standing for this flow run)."""
        return self.study_parent.get(study_of(stage_name))

    def close(self, ran: list[dict], failed: dict[str, str]) -> None:
        """Log the flow's figures and the lock, and end the study runs (FAILED where a stage failed)."""
        c = tracking.client(self.root)
        c.log_metric(self.parent, "flow.wall_s", time.perf_counter() - self.t0)
        c.log_metric(self.parent, "flow.stages_ran", sum(r["ran"] for r in ran))
        c.log_metric(self.parent, "flow.stages_failed", len(failed))
        if (self.root / "dvc.lock").exists():
            c.log_artifact(self.parent, str(self.root / "dvc.lock"))
        for s, rid in self.study_parent.items():
            bad = [why for n, why in failed.items() if study_of(n) == s]
            if bad:
                tracking.record_failure(c, rid, "; ".join(bad))
            else:
                c.set_terminated(rid, "FINISHED")

    def finish(self) -> None:
        tracking.client(self.root).set_terminated(self.parent, "FINISHED")

    def fail(self, message: str) -> None:
        c = tracking.client(self.root)
        for rid in [*self.study_parent.values(), self.parent]:
            if c.get_run(rid).info.status == "RUNNING":
                tracking.record_failure(c, rid, message)
