"""Which MLflow runs made the committed outputs, and their compute time: ``stages/ledger/runs.json``.

The ledger names, for each claim, the stage that wrote the metrics file it reads (with that
file's md5 as the stage's ``dvc.lock`` entry records it) and the MLflow run of that stage and of
every stage upstream of it in the study; per study it shows the compute time on the default
profile. The runs live in the MLflow store, which is not a DVC dep (``mlruns.db`` is git-ignored:
a fresh clone has none; every run adds to it): a ledger stage that read it would not be a
function of its deps. So the link is recorded here, outside DVC, into a small git-tracked file
that *is* a dep of the ledger stage:

    python -m stages.ledger.runs [--tracking-uri URI ...] [--profile default]
    python -m stages.ledger.runs --check      # does this checkout's store hold the runs named?

For every stage the studies' ``dvc.yaml`` files define it picks, on that profile, the latest FINISHED
run of that stage (tag ``dvc.stage``) whose recorded dep hashes (tags ``dep.<path>``, set by
stages/common/runtime/tracking.py) all equal the lock's (``exact: true``: it saw exactly the inputs the
committed outputs were made from); failing that, the latest FINISHED run of the stage
(``exact: false``: its inputs differ, e.g. it ran before an infrastructure edit that DVC recorded
without re-running, and the page marks it so). Each run keeps the host that ran it (tag
``claimbench.host``) and its day (UTC). A stage with no such run is listed under ``no_run`` with
the reason, never left out: each checkout logs to its own ``mlruns.db`` (stages/common/runtime/
mlflow_client.py), so a stage run in a scratch copy, another clone or on another machine (and a
branch merged from one) has its run in that store, not in the one read here; pass that store with
another ``--tracking-uri``. Compute time is the runs' ``stage.compute_s`` metric (the stage body,
without imports and tracking), summed per study. Per study, ``claims`` names the metrics file its
claims.yaml reads, the stage that writes it, that file's md5 in the stage's dvc.lock entry, and
the stages that computed it (that stage and every stage upstream of it, the params gate aside).
Run it after a ``dvc repro`` whose outputs you commit; the file keeps one entry per profile.
"""
from __future__ import annotations

import argparse
import datetime
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import yaml

RUNS_JSON = "stages/ledger/runs.json"
HOST_TAG = "claimbench.host"          # stages/common/runtime/tracking.py HOST_TAG


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


def claim_stages(root: Path) -> dict[str, dict]:
    """{study: {metrics, stage, lock_path, md5, computed_by}} for every study's claims.yaml: the
    metrics file it reads, the stage whose outs hold it, the md5 that stage's dvc.lock entry
    records for it (``lock_path``: the out that holds it, the file itself or its folder; md5 ""
    when the lock has no entry), and the stages that computed it (that stage and all upstream of
    it but the params gate, sorted)."""
    from stages.common.runtime.dvcfile import PARAMS_STAGE, covered, load_lock, load_stages, upstream

    stages, lock = load_stages(root), load_lock(root)
    edges = upstream(stages)
    out: dict[str, dict] = {}
    for claims_file in sorted((root / "stages").glob("*/claims.yaml")):
        cf = yaml.safe_load(claims_file.read_text()) or {}
        study, metrics = cf.get("study", claims_file.parent.name), cf.get("metrics", "")
        prod = next((s for s in stages.values() if s.file != "dvc.yaml" and covered(metrics, s.outs)), None)
        if prod is None:
            out[study] = {"metrics": metrics, "stage": None, "lock_path": None, "md5": "", "computed_by": []}
            continue
        entry = lock.get(prod.name) if lock.get(prod.name, {}).get("_address") == prod.address else None
        held = [o for o in (entry or {}).get("outs", []) if covered(metrics, [o["path"]])]
        held.sort(key=lambda o: -len(o["path"]))                     # the closest out first
        seen, todo = set(), [prod.name]
        while todo:
            n = todo.pop()
            if n in seen or n == PARAMS_STAGE or stages[n].file == "dvc.yaml":
                continue
            seen.add(n)
            todo.extend(edges[n])
        out[study] = {"metrics": metrics, "stage": prod.name,
                      "lock_path": held[0]["path"] if held else None, "md5": held[0].get("md5", "") if held else "",
                      "computed_by": sorted(seen)}
    return out


def _day(start_ms) -> str:
    return datetime.datetime.fromtimestamp(start_ms / 1000, datetime.timezone.utc).date().isoformat()


def matching_runs(client, stages: dict[str, dict[str, str]], profile: str,
                  seen: dict[str, int] | None = None) -> dict[str, dict]:
    """{stage: {run_id, experiment, exact, compute_s, host, day, start}} for the stages a FINISHED
    run of ``profile`` matches; ``seen`` (if given) counts every run of each stage, any profile or
    status, to say why a stage has none."""
    found: dict[str, dict] = {}
    for exp in client.search_experiments():
        for run in client.search_runs([exp.experiment_id], "", max_results=50000):
            tags = run.data.tags
            name = tags.get("dvc.stage")
            if name not in stages:
                continue
            if seen is not None:
                seen[name] = seen.get(name, 0) + 1
            if tags.get("profile") != profile or run.info.status != "FINISHED":
                continue
            recorded = {k[4:]: v for k, v in tags.items() if k.startswith("dep.")}
            exact = bool(recorded) and all(stages[name].get(p) == md5 for p, md5 in recorded.items())
            cand = {"run_id": run.info.run_id, "experiment": exp.name, "exact": exact,
                    "compute_s": round(float(run.data.metrics.get("stage.compute_s", 0.0)), 1),
                    "host": tags.get(HOST_TAG, "unknown"), "day": _day(run.info.start_time),
                    "start": run.info.start_time}
            if name not in found or better(cand, found[name]):
                found[name] = cand
    return found


def better(a: dict, b: dict) -> bool:
    """An exact match beats an inexact one; then the later run."""
    return (a["exact"], a["start"]) > (b["exact"], b["start"])


def no_run_why(name: str, locked: bool, seen: int, profile: str, stores: list[str]) -> str:
    """Why a stage has no run in runs.json: said plainly, never left out."""
    where = ", ".join(stores)
    if not locked:
        return "never run: its dvc.lock has no entry for it"
    if seen:
        return (f"the store read ({where}) holds {seen} run(s) of this stage, none FINISHED on profile "
                f"{profile}")
    return (f"no run of this stage in the store read ({where}): its committed outputs were made in "
            "another checkout or on another machine (each logs to its own mlruns.db), or with "
            "tracking off; record that store with --tracking-uri, or re-run the stage here")


def store_label(uri: str, root: Path) -> str:
    """A store as runs.json names it: ``mlruns.db`` for the checkout's own, a server's URL as is,
    another sqlite file by its name (no machine's absolute path in a committed file)."""
    if uri.startswith("sqlite:///"):
        p = Path(uri[len("sqlite:///"):])
        return "mlruns.db" if p.resolve() == (root / "mlruns.db").resolve() else f"sqlite file {p.name}"
    return uri


def record(root: Path, uris: list[str], profile: str, clients: dict | None = None) -> dict:
    """The profile's entry of runs.json; ``clients`` ({uri: client}) stands in for MLflow in tests."""
    stages = study_stages(root)
    found: dict[str, dict] = {}
    seen: dict[str, int] = {}
    for uri in uris:
        print(f"  reading {uri}", flush=True)
        if clients is not None:
            client = clients[uri]
        else:
            from mlflow.tracking import MlflowClient

            client = MlflowClient(tracking_uri=uri)
        for name, r in matching_runs(client, stages, profile, seen).items():
            if name not in found or better(r, found[name]):
                found[name] = r
    labels = [store_label(u, root) for u in uris]
    studies: dict[str, dict] = {}
    for name in sorted(stages):
        study = name.split("-")[0]
        s = studies.setdefault(study, {"compute_s": 0.0, "stages": {}, "no_run": {}})
        if name in found:
            r = {k: v for k, v in found[name].items() if k != "start"}
            s["stages"][name] = r
            s["compute_s"] = round(s["compute_s"] + r["compute_s"], 1)
        else:
            s["no_run"][name] = no_run_why(name, bool(stages[name]), seen.get(name, 0), profile, labels)
    for study, c in claim_stages(root).items():
        studies.setdefault(study, {"compute_s": 0.0, "stages": {}, "no_run": {}})["claims"] = c
    runs = [r for r in found.values()]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                            text=True).stdout.strip()
    return {"commit": commit, "studies": studies,
            "store": {"read": labels, "hosts": sorted({r["host"] for r in runs}),
                      "days": sorted({r["day"] for r in runs})}}


def unaccounted(rec: dict) -> list[str]:
    """The stages that computed a claim's figure (a study's ``claims.computed_by``) with neither
    a run nor a reason in ``no_run``, in a profile's record: what must be empty."""
    out = set()
    for s in rec.get("studies", {}).values():
        for name in (s.get("claims") or {}).get("computed_by", []):
            ran = any(name in t.get("stages", {}) for t in rec["studies"].values())
            why = any((t.get("no_run") or {}).get(name, "").strip() for t in rec["studies"].values())
            if not (ran or why):
                out.add(name)
    return sorted(out)


def run_ids(data: dict, profile: str = "default") -> list[str]:
    """Every run id runs.json names for ``profile``."""
    return sorted(r["run_id"] for s in data.get(profile, {}).get("studies", {}).values()
                  for r in s.get("stages", {}).values())


def local_store(root: Path, data: dict, profile: str = "default") -> dict:
    """Whether this checkout's MLflow store holds the runs runs.json names (read-only sqlite3,
    nothing imports MLflow): {db, exists, named, held}. Machine-dependent, so it is said at run
    time (``--check``), never written into the committed ledger."""
    db = root / "mlruns.db"
    ids = run_ids(data, profile)
    held = 0
    if db.exists() and ids:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            marks = ",".join("?" * len(ids))
            held = con.execute(f"SELECT COUNT(*) FROM runs WHERE run_uuid IN ({marks})", ids).fetchone()[0]
    return {"db": str(db), "exists": db.exists(), "named": len(ids), "held": held}


def store_text(st: dict, data: dict, profile: str = "default") -> str:
    """What ``--check`` prints: where the runs runs.json names are."""
    store = data.get(profile, {}).get("store", {})
    made = (f"host {', '.join(store.get('hosts') or ['unknown'])}, "
            f"{' to '.join(sorted(set([min(store['days']), max(store['days'])])))}" if store.get("days")
            else "host and day not recorded")
    if st["named"] and st["held"] == st["named"]:
        return f"this checkout's MLflow store ({st['db']}) holds all {st['named']} runs runs.json names"
    have = (f"this checkout's store ({st['db']}) holds {st['held']} of them" if st["exists"]
            else "this checkout has no copy (no mlruns.db)")
    return (f"the {st['named']} runs runs.json names are in the store of the machine that ran them "
            f"({made}); {have}: run `dvc repro` to make your own, or point MLFLOW_TRACKING_URI at a "
            "shared server")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m stages.ledger.runs", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tracking-uri", action="append",
                    help="MLflow store(s) to read (default: sqlite:///mlruns.db of the repo)")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--root", type=Path, default=Path.cwd())
    ap.add_argument("--out", type=Path, help=f"write here instead of {RUNS_JSON} under --root")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; say whether this checkout's mlruns.db holds the runs runs.json names")
    a = ap.parse_args(argv)
    root = a.root.resolve()
    path = a.out or root / RUNS_JSON
    data = json.loads(path.read_text()) if path.exists() else {}
    if a.check:
        print(store_text(local_store(root, data, a.profile), data, a.profile))
        return 0
    uris = a.tracking_uri or [f"sqlite:///{root / 'mlruns.db'}"]
    for uri in uris:
        if uri.startswith("sqlite:///") and not Path(uri[len("sqlite:///"):]).exists():
            print(f"error: no MLflow store at {uri[len('sqlite:///'):]} (run dvc repro first, "
                  f"or pass --tracking-uri)", file=sys.stderr)
            return 2
    data[a.profile] = record(root, uris, a.profile)
    from stages.common.io import write_text

    write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    studies = data[a.profile]["studies"].values()
    n = sum(len(s["stages"]) for s in studies)
    miss = sorted(m for s in studies for m in s["no_run"])
    exact = sum(r["exact"] for s in studies for r in s["stages"].values())
    print(f"{path}: profile {a.profile}: {n} stage runs found, {exact} with the lock's exact inputs" +
          (f"; no matching run for {len(miss)} (said why in no_run): {', '.join(miss)}" if miss else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
