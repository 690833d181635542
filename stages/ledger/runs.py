"""Which MLflow runs made the committed outputs, and their compute time: ``stages/ledger/runs.json``.

The ledger page shows, per study, its compute time on the default profile and the MLflow run ids
of the stage runs that made its plots. Those live in the MLflow store, which is not a DVC dep
(a fresh clone has none; every run adds to it): a ledger stage that read it would not be a
function of its deps. So the link is recorded here, outside DVC, into a small git-tracked file
that *is* a dep of the ledger stage:

    python -m stages.ledger.runs [--tracking-uri URI ...] [--profile default]

For every stage the studies' ``dvc.yaml`` files define it picks, on that profile, the latest FINISHED
run of that stage (tag ``dvc.stage``) whose recorded dep hashes (tags ``dep.<path>``, set by
stages/common/runtime/tracking.py) all equal the lock's (``exact: true``: it saw exactly the inputs the
committed outputs were made from); failing that, the latest FINISHED run of the stage
(``exact: false``: its inputs differ, e.g. it ran before an infrastructure edit that DVC recorded
without re-running, and the page marks it so). Stages with no run at all are listed as missing. Compute time is the runs'
``stage.compute_s`` metric (the stage body, without imports and tracking), summed per study.
Run it after a ``dvc repro`` whose outputs you commit; the file keeps one entry per profile.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path


RUNS_JSON = "stages/ledger/runs.json"


def study_stages(root: Path) -> dict[str, dict[str, str]]:
    """{stage name: {dep path: md5}} for every stage the studies' and corpora's dvc.yaml files
    define (not the root's ledger), with the dep hashes their dvc.lock entries recorded (none
    for a stage never run). The DAG decides which stages there are: a lock entry left by a
    stage since removed is not one."""
    from stages.common.runtime.dvcfile import load_lock, load_stages

    lock = load_lock(root)
    out = {}
    for name, spec in load_stages(root).items():
        if spec.file == "dvc.yaml":
            continue
        entry = lock.get(name) if lock.get(name, {}).get("_address") == spec.address else None
        out[name] = {d["path"]: d.get("md5", "") for d in (entry or {}).get("deps", [])}
    return out


def matching_runs(client, stages: dict[str, dict[str, str]], profile: str) -> dict[str, dict]:
    """{stage: {run_id, experiment, compute_s, start}} for the stages a run matches."""
    found: dict[str, dict] = {}
    for exp in client.search_experiments():
        for run in client.search_runs([exp.experiment_id], f"tags.profile = '{profile}' and "
                                      "attributes.status = 'FINISHED'", max_results=5000):
            tags = run.data.tags
            name = tags.get("dvc.stage")
            if name not in stages:
                continue
            recorded = {k[4:]: v for k, v in tags.items() if k.startswith("dep.")}
            exact = bool(recorded) and all(stages[name].get(p) == md5 for p, md5 in recorded.items())
            cand = {"run_id": run.info.run_id, "experiment": exp.name, "exact": exact,
                    "compute_s": round(float(run.data.metrics.get("stage.compute_s", 0.0)), 1),
                    "start": run.info.start_time}
            if name not in found or better(cand, found[name]):
                found[name] = cand
    return found


def better(a: dict, b: dict) -> bool:
    """An exact match beats an inexact one; then the later run."""
    return (a["exact"], a["start"]) > (b["exact"], b["start"])


def record(root: Path, uris: list[str], profile: str) -> dict:
    from mlflow.tracking import MlflowClient

    stages = study_stages(root)
    found: dict[str, dict] = {}
    for uri in uris:
        print(f"  reading {uri}", flush=True)
        for name, r in matching_runs(MlflowClient(tracking_uri=uri), stages, profile).items():
            if name not in found or better(r, found[name]):
                found[name] = r
    studies: dict[str, dict] = {}
    for name in sorted(stages):
        study = name.split("-")[0]
        s = studies.setdefault(study, {"compute_s": 0.0, "stages": {}, "missing": []})
        if name in found:
            r = {k: v for k, v in found[name].items() if k != "start"}
            s["stages"][name] = r
            s["compute_s"] = round(s["compute_s"] + r["compute_s"], 1)
        else:
            s["missing"].append(name)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                            text=True).stdout.strip()
    return {"commit": commit, "studies": studies}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m stages.ledger.runs", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tracking-uri", action="append",
                    help="MLflow store(s) to read (default: sqlite:///mlruns.db of the repo)")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--root", type=Path, default=Path.cwd())
    a = ap.parse_args(argv)
    root = a.root.resolve()
    uris = a.tracking_uri or [f"sqlite:///{root / 'mlruns.db'}"]
    for uri in uris:
        if uri.startswith("sqlite:///") and not Path(uri[len("sqlite:///"):]).exists():
            print(f"error: no MLflow store at {uri[len('sqlite:///'):]} (run dvc repro first, "
                  f"or pass --tracking-uri)", file=sys.stderr)
            return 2
    path = root / RUNS_JSON
    data = json.loads(path.read_text()) if path.exists() else {}
    data[a.profile] = record(root, uris, a.profile)
    from stages.common.io import write_text

    write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    n = sum(len(s["stages"]) for s in data[a.profile]["studies"].values())
    miss = sorted(m for s in data[a.profile]["studies"].values() for m in s["missing"])
    exact = sum(r["exact"] for s in data[a.profile]["studies"].values() for r in s["stages"].values())
    print(f"{path}: profile {a.profile}: {n} stage runs found, {exact} with the lock's exact inputs" +
          (f"; no matching run for {len(miss)}: {', '.join(miss)}" if miss else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
