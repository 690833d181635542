"""Parallel speed-up: independent studies run by the Prefect flow (concurrently, one process
per stage) against `dvc repro` (one stage after another), from scratch, in one run.

    python benchmarks/pipeline/parallel_speedup.py [--profile default] [--only a,b,c,d]
    python benchmarks/pipeline/parallel_speedup.py --studies N      # the first N studies (replicas if short)

For each side a fresh copy of this checkout (no outputs, no DVC cache, no MLflow store) runs
the chains of the independent studies (with `params`, the check every stage waits for); the
ledger, which joins them, is left out of both. The ratio printed is wall(dvc repro) / wall(flow),
followed by where the flow's wall time went: the stage processes (busy core-seconds and the mean
number running at once), the serial `dvc commit` after each stage, the DVC checks before them,
and the rest (Prefect's start and bookkeeping, MLflow parent runs).

``--only`` takes real studies. The default four (attr_analogy, coral_diffusion, cdc_gs,
w2v_quartic) are single-threaded chains of similar length on the default profile (65-75 s each in
the ledger's runs), so two cores can in principle halve their wall time.

While the repository has fewer independent studies than ``--studies``, the copies get
replicas of a study (``<study>_r2``: the same code and params under another name, writing
their own outputs); the output says so. Replicas measure the orchestration honestly (the
same work, run concurrently or not) but are not different studies.

``--smoke`` runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.bench import env, scratch, stage_metrics, timed  # noqa: E402
from stages.common.runtime.checkout import copy_checkout, git  # noqa: E402
from stages.common.runtime.dvcfile import load_stages  # noqa: E402


def studies_in(root: Path) -> list[str]:
    return sorted({n.split("-")[0] for n in load_stages(root) if "-" in n})


def add_replica(root: Path, study: str, name: str) -> None:
    """Copy ``study`` under ``name``: its folder (code, params file, dvc.yaml), every mention renamed."""
    def rename(text: str) -> str:
        return re.sub(rf"\b{study}\b", name, text)

    src, dst = root / "stages" / study, root / "stages" / name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "dvc.lock"))
    for f in dst.rglob("*"):
        if f.is_file() and f.suffix in (".py", ".yaml", ".json"):
            f.write_text(rename(f.read_text()))
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"replica {name} of {study}")


DEFAULT_STUDIES = ["attr_analogy", "coral_diffusion", "cdc_gs", "w2v_quartic"]


SMOKE_STUDIES = "mairl_entropy,linear_cmdp"     # --smoke: two studies whose smoke chains take seconds


def prepare_copy(base: Path, profile: str, n_studies: int, only: list[str] | None = None
                 ) -> tuple[Path, list[str], list[str]]:
    root = copy_checkout(REPO, base, profile=profile)
    if only:
        missing = sorted(set(only) - set(studies_in(root)))
        if missing:
            raise SystemExit(f"--only: no such study: {', '.join(missing)}")
        return root, only, final_stages(root, only)
    real = studies_in(root)
    replicas = []
    i = 2
    while len(real) + len(replicas) < n_studies:
        name = f"{real[0]}_r{i}"
        add_replica(root, real[0], name)
        replicas.append(name)
        i += 1
    studies = real + replicas
    return root, studies, final_stages(root, studies)


def final_stages(root: Path, studies: list[str]) -> list[str]:
    """The last stages of each study's chain: no other stage of the study reads their outs."""
    stages = load_stages(root)
    finals = []
    for s in studies:
        mine = [n for n in stages if n.split("-")[0] == s]
        read = {d for n in mine for d in stages[n].deps}
        finals.extend(n for n in mine if not set(stages[n].outs) & read)
    return finals


@contextlib.contextmanager
def prefect_server(root: Path):
    """A `prefect server start` on a free loopback port, its API URL while it runs."""
    from flows.stack import HOST, free_port, stop_trees, wait_http

    port = free_port()
    log = open(root / "prefect-server.log", "wb")
    proc = subprocess.Popen(["prefect", "server", "start", "--host", HOST, "--port", str(port),
                             "--analytics-off", "--no-ui"], cwd=root, env=env(), stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    api = f"http://{HOST}:{port}/api"
    try:
        t0 = time.perf_counter()
        wait_http(f"{api}/health", 180, proc, root / "prefect-server.log")
        print(f"  (server up in {time.perf_counter() - t0:.1f} s, untimed)")
        yield api
    finally:
        import psutil

        stop_trees([psutil.Process(proc.pid)])
        log.close()


def run_flow(par_root: Path, finals: list[str], addresses: list[str], t_seq: float, n_studies: int,
             **extra_env: str) -> float:
    """Run the flow on ``finals`` in ``par_root``; print its wall, the ratio and where its time went."""
    launched = time.time()
    t_par, out = timed([sys.executable, "-m", "flows.pipeline", *finals], par_root, **extra_env)
    finished = launched + t_par
    result = json.loads(out[out.index("{"):])
    print(f"stages run by the flow: {len(result['ran'])}")
    print(f"wall, Prefect flow:{t_par:7.1f} s")
    print(f"speed-up (dvc repro / flow): {t_seq / t_par:.2f}x on {os.cpu_count()} cores "
          f"for {n_studies} independent studies")
    timings = result.get("stage_timings", {})
    busy = sum(t["wall_s"] for t in timings.values())
    commit = sum(t["commit_s"] for t in timings.values())
    check = sum(t["check_s"] for t in timings.values())
    print("where the flow's wall time went:")
    print(f"  stage processes: {busy:7.1f} core-s busy, {busy / t_par:.2f} running at once on average")
    print(f"  dvc commit after each stage (serial): {commit:6.1f} s; DVC checks before stages: {check:.1f} s")
    longest = {}
    for st, t in timings.items():
        longest[st.split("-")[0]] = longest.get(st.split("-")[0], 0) + t["wall_s"] + t["commit_s"]
    chain = max(longest.values()) if longest else 0.0
    print(f"  longest chain (stage walls + commits): {chain:.1f} s ({max(longest, key=longest.get) if longest else '-'});"
          f" bound on the speed-up: {t_seq / max(chain, busy / max(1, os.cpu_count() or 1)):.2f}x")
    if timings and all("ended_at_s" in t for t in timings.values()):
        cores = os.cpu_count() or 1
        starts = [t["ended_at_s"] - t["commit_s"] - t["wall_s"] for t in timings.values()]
        ends = [t["ended_at_s"] for t in timings.values()]
        first, last = min(starts), max(ends)
        print(f"  timeline: the first stage started {first - launched:.1f} s after launch (Prefect's "
              f"server, the plan, MLflow parent runs); the last ended {finished - last:.1f} s before "
              f"the flow returned")
        print(f"  between them ({last - first:.1f} s) the {cores} cores stood idle "
              f"{cores * (last - first) - busy:.1f} core-s (waiting on a chain's upstream, or on "
              f"the scheduler)")
        print_timeline(timings, launched)
    else:
        print(f"  the rest (Prefect start, task bookkeeping, MLflow parent runs, idle cores): "
              f"{t_par - max(chain, busy / (os.cpu_count() or 1)):.1f} s")
    status = subprocess.run(["dvc", "status", *addresses], cwd=par_root, env=env(),
                            capture_output=True, text=True).stdout
    print(f"after the flow, dvc status: {status.strip().splitlines()[-1] if status.strip() else '?'}")
    return t_par


def print_timeline(timings: dict[str, dict], launched: float) -> None:
    """Each stage's process start and end, and its commit's end (s after launch), in start order,
    with the number of stage processes running when it started: where the cores stood idle."""
    spans = {n: (t["ended_at_s"] - t["commit_s"] - t["wall_s"] - launched,
                 t["ended_at_s"] - t["commit_s"] - launched, t["ended_at_s"] - launched)
             for n, t in timings.items()}
    print("  timeline (s after launch): stage, process start - end, committed, others running at its start")
    for n, (a, b, c) in sorted(spans.items(), key=lambda kv: kv[1][0]):
        others = sum(1 for m, (a2, b2, _) in spans.items() if m != n and a2 <= a < b2)
        print(f"    {n:32s} {a:6.1f} - {b:6.1f}  {c:6.1f}  {others}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", choices=["smoke", "default", "paper"])
    ap.add_argument("--studies", type=int, default=0, help="the first N studies instead (replicas if short)")
    ap.add_argument("--only", default=",".join(DEFAULT_STUDIES), help="comma-separated real studies")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copies")
    ap.add_argument("--server", action="store_true",
                    help="also run the flow (in a third copy) against a Prefect server started before the clock")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args(argv)
    if a.smoke:                       # two small studies on the smoke profile, no server
        a.profile, a.studies, a.only, a.server = "smoke", 0, SMOKE_STUDIES, False
    with scratch("claimbench-bench-", a.keep) as tmp:
        print(f"machine: {os.cpu_count()} CPU cores; profile {a.profile}; scratch {tmp}")
        only = None if a.studies else [x for x in a.only.split(",") if x]
        if only is not None and len(only) < 2:
            raise SystemExit("--only: name at least two studies")
        seq_root, studies, finals = prepare_copy(tmp / "sequential", a.profile, a.studies, only)
        par_root, _, _ = prepare_copy(tmp / "flow", a.profile, a.studies, only)
        real = studies_in(REPO)
        print(f"studies: {', '.join(studies)}" +
              (f"  (replicas of {real[0]}: {', '.join(s for s in studies if s not in real)};"
               f" this repository has {len(real)} independent study so far)" if len(studies) > len(real) else ""))
        print(f"targets: {', '.join(finals)}")

        print("dvc repro (sequential):")
        addresses = [load_stages(seq_root)[n].address for n in finals]
        t_seq, out = timed(["dvc", "repro", *addresses], seq_root)
        n_seq = sum(line.startswith("Running stage") for line in out.splitlines())
        # Prefect's database is created once per PREFECT_HOME (a user's flows share one); create
        # this fresh home's before the clock starts, as dvc's own setup (`dvc init`) is not timed
        t_db, _ = timed(["prefect", "server", "database", "upgrade", "-y"], par_root, quiet=True)
        print(f"Prefect flow (independent stages concurrently, one process each; its fresh database "
              f"made first, untimed: {t_db:.1f} s), with Prefect's ephemeral server (started by the flow):")
        work = {s: m["stage.compute_s"] for s, m in stage_metrics(seq_root).items()}
        print(f"stages run by dvc repro: {n_seq}; sum of their compute: {sum(work.values()):.1f} s; "
              f"wall {t_seq:.1f} s")
        run_flow(par_root, finals, addresses, t_seq, len(studies))
        if a.server:
            srv_root, _, _ = prepare_copy(tmp / "flow-server", a.profile, a.studies, only)
            print("Prefect flow against a Prefect server already running (as under `claimbench stack "
                  "up` or a deployment's worker; started before the clock):")
            with prefect_server(srv_root) as api:
                run_flow(srv_root, finals, addresses, t_seq, len(studies), PREFECT_API_URL=api)
    return 0


if __name__ == "__main__":
    sys.exit(main())
