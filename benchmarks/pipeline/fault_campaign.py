"""A fault campaign: SIGKILL the main job (`dvc repro`) at random points, rerun it, check nothing broke.

    python benchmarks/pipeline/fault_campaign.py [--points 50] [--seed 1000] [--studies zipf_bigram mpo]
    python benchmarks/pipeline/fault_campaign.py --smoke        # 2 points, mnl_assortment only (CI)

In a scratch copy of this checkout (smoke profile, only ``--studies``' stages, the params check and
the ledger; :func:`stages.common.runtime.checkout.copy_checkout`), one uninterrupted ``dvc repro``
builds the reference, timing each stage. Then, for each kill point:

1. a fresh copy of the reference build (outputs, dvc.lock, DVC cache and run cache, MLflow store;
   ``tests.builds.copy_built``) runs ``dvc repro --force --downstream <stage>``: a random stage and
   everything after it are redone, in a process group of their own;
2. when the point's moment comes, the whole group (dvc and the stage it runs) gets SIGKILL, and on
   a quarter of the points the tracking agent too (a detached daemon in its own session, so
   killing the group spares it; a line says ``+agent`` where it was killed);
3. ``dvc repro`` runs to completion, and the copy must then have: (a) every file under ``reports/``
   and ``data/`` as the reference has it (:func:`benchmarks.pipeline.compare_builds.compare`: bytes,
   JSON and CSV without their wall-time fields, MLflow's ``MLmodel`` and the params marker apart);
   (b) no MLflow run left ``RUNNING`` (after up to ``--grace`` seconds for the agent to close the
   runs of killed stages); (c) ``dvc status`` clean; (d) no ``.tmp-*``/``.old-*`` leftovers.

The moment (``phase``) is one of: ``time`` (a delay drawn within the reference duration of the
stages being redone: mid-stage, or while DVC hashes and commits between stages); ``finish`` (just
after the tracking agent wrote the first artifact of a stage's ``finish``, i.e. while it logs the
stage's outs to MLflow); ``model`` (while a stage registers a model: a logged model's artifacts
appeared); ``ledger`` (a delay within the ledger stage's reference duration after it started).
Points are drawn from ``random.Random(--seed)`` (:func:`choose_points`), so a campaign is repeatable
up to the machine's timing.

Why a copy of the built reference and a forced suffix, not a build from nothing each time: a point
then costs only the redone stages up to the kill plus a rerun that DVC mostly serves from its run
cache (a few seconds), so 50 points fit in about half an hour on 2 cores instead of 50 full builds;
the stages before the kill really run again (and must come out byte-identical), and the rerun
exercises the recovery paths a real restart takes (leftovers cleaned, outs restored or remade,
dvc.lock rewritten). Starting from a random subset of outs removed would test DVC's restore more
and our stages' kill-safety less.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.bench import env, scratch  # noqa: E402
from benchmarks.pipeline.compare_builds import compare  # noqa: E402

PHASES = ("time", "finish", "model", "ledger")
WEIGHTS = {"time": 0.4, "finish": 0.25, "model": 0.15, "ledger": 0.2}
AGENT_SHARE = 0.25            # share of points that kill the tracking agent too
AGENT_MODULE = "stages.common.runtime.tracking_agent"
RUNNING = re.compile(r"^Running stage '([^']+)'")
AGENT_CPU = [0.0]             # CPU seconds of the agents stopped so far (not our children)


@dataclass(frozen=True)
class KillPoint:
    index: int
    start: str        # the stage redone first (dvc address), with everything downstream
    phase: str        # when: see PHASES
    delay_s: float    # after the start (time) or after the phase was seen
    agent: bool       # SIGKILL the tracking agent too

    def describe(self) -> str:
        return (f"{self.phase}{'+agent' if self.agent else ''} from {self.start.split(':')[-1]} "
                f"+{self.delay_s:.1f}s")


@dataclass
class Dag:
    order: list[str]                 # dvc addresses, in the order the reference build ran them
    seconds: dict[str, float]        # each stage's wall time in the reference build
    downstream: dict[str, list[str]]  # address -> itself and every stage after it
    model_stages: list[str]          # stages that log a model to MLflow
    ledger: str | None


def choose_points(seed: int, n: int, dag: Dag) -> list[KillPoint]:
    """``n`` kill points drawn from ``random.Random(seed)``: the same seed and DAG give the same
    points. ``model`` points start at (or upstream of, within its study) a model-logging stage,
    ``ledger`` points anywhere upstream of the ledger."""
    rng = random.Random(seed)
    phases = [p for p in PHASES if (p != "model" or dag.model_stages) and (p != "ledger" or dag.ledger)]
    weights = [WEIGHTS[p] for p in phases]
    # not the params check: its marker differs on every save by design, so forcing it redoes every
    # stage, and the rerun too (no run cache hit): a point from there costs two full builds
    starts = [s for s in dag.order if s.split(":")[-1] != "params"] or dag.order
    points = []
    for i in range(n):
        phase = rng.choices(phases, weights)[0]
        agent = rng.random() < AGENT_SHARE
        if phase == "model":
            target = rng.choice(dag.model_stages)
            study = target.split(":")[-1].split("-")[0]
            start = rng.choice([s for s in starts if target in dag.downstream[s]
                                and s.split(":")[-1].split("-")[0] == study])
            delay = rng.uniform(0.0, 0.3)
        elif phase == "ledger":
            start = rng.choice([s for s in starts if dag.ledger in dag.downstream[s]])
            delay = rng.uniform(0.0, dag.seconds.get(dag.ledger, 1.0))
        elif phase == "finish":
            start = rng.choice(starts)
            delay = rng.uniform(0.0, 0.3)
        else:
            start = rng.choice(starts)
            delay = rng.uniform(0.0, sum(dag.seconds.get(s, 0.0) for s in dag.downstream[start]))
        points.append(KillPoint(i, start, phase, round(delay, 3), agent))
    return points


# -- the checks ----------------------------------------------------------------------------

def differing_outputs(reference: Path, work: Path) -> list[str]:
    """Files under reports/ and data/ that differ from the reference (or exist on one side only)."""
    found = compare(reference, work)
    return ([f"differs: {f}" for f in found["differ"]] + [f"missing: {f}" for f in found["only_a"]]
            + [f"extra: {f}" for f in found["only_b"]])


def running_runs(work: Path, grace: float = 0.0) -> list[str]:
    """MLflow runs in ``work``'s store still RUNNING after up to ``grace`` seconds: each as
    ``<stage or run name> <run id>``."""
    db = work / "mlruns.db"
    if not db.exists():
        return []
    deadline = time.monotonic() + grace
    while True:
        try:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
            try:
                rows = con.execute(
                    "SELECT r.run_uuid, COALESCE(t.value, r.name) FROM runs r LEFT JOIN tags t "
                    "ON t.run_uuid = r.run_uuid AND t.key = 'dvc.stage' "
                    "WHERE r.status = 'RUNNING' AND r.lifecycle_stage = 'active'").fetchall()
            finally:
                con.close()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            rows = [("?", "store locked")]
        if not rows or time.monotonic() > deadline:
            return [f"{name} {run_id}" for run_id, name in rows]
        time.sleep(0.5)


def dvc_changes(work: Path) -> str:
    """What `dvc status` reports changed ('' when clean)."""
    proc = subprocess.run(["dvc", "status", "--json"], cwd=work, env=env(), capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        return f"dvc status failed ({proc.returncode}): {proc.stderr.strip()[-500:]}"
    out = proc.stdout.strip()
    return "" if out in ("", "{}") else out[:500]


def leftovers(work: Path) -> list[str]:
    from tests.pipeline.test_failure_safety import _leftovers

    return _leftovers(work)


def check(reference: Path, work: Path, grace: float = 15.0) -> list[str]:
    """Everything wrong with ``work`` after the rerun (empty: the point survived)."""
    problems = [f"output {d}" for d in differing_outputs(reference, work)]
    problems += [f"MLflow run RUNNING: {r}" for r in running_runs(work, grace)]
    dirty = dvc_changes(work)
    if dirty:
        problems.append(f"dvc status: {dirty}")
    before = set(leftovers(reference))    # what the copied checkout held already (someone's run)
    problems += [f"leftover {f}" for f in leftovers(work) if f not in before]
    return problems


# -- running -------------------------------------------------------------------------------

def agents(root: Path) -> list:
    """The tracking agent processes serving ``root``."""
    import psutil

    found, want = [], str(root.resolve())
    for p in psutil.process_iter(["cmdline"]):
        argv = p.info["cmdline"] or []
        if AGENT_MODULE in argv and "--root" in argv and argv[argv.index("--root") + 1:][:1] == [want]:
            found.append(p)
    return found


def stop_agents(root: Path, sig: int = signal.SIGTERM) -> float:
    """Send ``sig`` to ``root``'s agents (by pid); return the CPU seconds they had used."""
    import psutil

    cpu = 0.0
    for p in agents(root):
        try:
            t = p.cpu_times()
            cpu += t.user + t.system
            p.send_signal(sig)
        except psutil.NoSuchProcess:
            pass
    AGENT_CPU[0] += cpu
    return cpu


def repro(root: Path, args: list[str], timeout: float = 1800) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(["dvc", "repro", *args], cwd=root, env=env(PYTHONUNBUFFERED="1"),
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"dvc repro {' '.join(args)} failed ({proc.returncode}):\n"
                           f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t0, proc.stdout


def build_reference(root: Path) -> Dag:
    """``dvc repro`` in ``root`` (a fresh copy), timing each stage from DVC's "Running stage" lines."""
    from stages.common.runtime.dvcfile import load_stages, upstream

    t0 = time.perf_counter()
    proc = subprocess.Popen(["dvc", "repro"], cwd=root, env=env(PYTHONUNBUFFERED="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    starts: list[tuple[str, float]] = []
    tail: list[str] = []
    for line in proc.stdout:
        tail = (tail + [line])[-40:]
        m = RUNNING.match(line)
        if m:
            starts.append((m.group(1), time.perf_counter()))
    if proc.wait() != 0:
        raise RuntimeError("the reference dvc repro failed:\n" + "".join(tail))
    end = time.perf_counter()
    seconds = {a: (starts[i + 1][1] if i + 1 < len(starts) else end) - t
               for i, (a, t) in enumerate(starts)}
    stages = load_stages(root)
    by_address = {s.address: n for n, s in stages.items()}
    edges = upstream(stages)          # name -> names it depends on
    below: dict[str, set[str]] = {n: set() for n in stages}
    for n, ups in edges.items():
        for u in ups:
            below[u].add(n)

    def closure(n: str) -> set[str]:
        seen, todo = {n}, [n]
        while todo:
            for d in below[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen

    order = [a for a, _ in starts]
    downstream = {a: [stages[d].address for d in closure(by_address[a])] for a in order}
    ledger = next((a for a in order if a.split(":")[-1] == "ledger"), None)
    print(f"reference build: {len(order)} stages in {end - t0:.1f} s wall: "
          + ", ".join(f"{a.split(':')[-1]} {seconds[a]:.1f}" for a in order), flush=True)
    return Dag(order, seconds, downstream, model_stages(root, order), ledger)


def model_stages(root: Path, order: list[str]) -> list[str]:
    """The stages whose MLflow run logged a model (a ``model.<name>`` tag), as dvc addresses."""
    con = sqlite3.connect(f"file:{root / 'mlruns.db'}?mode=ro", uri=True, timeout=30)
    try:
        names = {r[0] for r in con.execute(
            "SELECT DISTINCT s.value FROM tags s JOIN tags m ON m.run_uuid = s.run_uuid "
            "WHERE s.key = 'dvc.stage' AND m.key LIKE 'model.%'")}
    finally:
        con.close()
    return [a for a in order if a.split(":")[-1] in names]


def _new_artifact(root: Path, since: float, part: str) -> bool:
    """Whether a file under mlartifacts/ whose path contains ``part`` was written after ``since``."""
    base = root / "mlartifacts"
    if not base.is_dir():
        return False
    for dirpath, _, files in os.walk(base):
        if part not in dirpath + "/":
            continue
        for f in files:
            try:
                if os.stat(os.path.join(dirpath, f)).st_mtime > since:
                    return True
            except FileNotFoundError:
                continue
    return False


def _runs_module(pid: int, module: str) -> bool:
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return False
    for p in children:
        try:
            argv = p.cmdline()
        except psutil.NoSuchProcess:
            continue
        if "-m" in argv and argv[argv.index("-m") + 1:][:1] == [module]:
            return True
    return False


def kill_run(root: Path, point: KillPoint, timeout: float = 900) -> tuple[str, float]:
    """Start the point's ``dvc repro --force --downstream``, SIGKILL it at the point's moment;
    returns (what happened, seconds from the start to the kill)."""
    since = time.time()
    t0 = time.monotonic()
    proc = subprocess.Popen(["dvc", "repro", "--force", "--downstream", point.start], cwd=root,
                            env=env(PYTHONUNBUFFERED="1"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    seen = None if point.phase != "time" else t0
    while proc.poll() is None and time.monotonic() - t0 < timeout:
        if seen is None:
            if point.phase == "finish" and (_new_artifact(root, since, "/artifacts/outs/")
                                            or _new_artifact(root, since, "/artifacts/manifests/")):
                seen = time.monotonic()
            elif point.phase == "model" and _new_artifact(root, since, "/models/m-"):
                seen = time.monotonic()
            elif point.phase == "ledger" and _runs_module(proc.pid, "stages.ledger.build"):
                seen = time.monotonic()
        if seen is not None and time.monotonic() - seen >= point.delay_s:
            n_agents = len(agents(root)) if point.agent else 0
            if n_agents:
                stop_agents(root, signal.SIGKILL)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            what = "killed" + (" with the agent" if n_agents else " (no agent up)" if point.agent else "")
            return what, time.monotonic() - t0
        time.sleep(0.02)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "timed out, killed", time.monotonic() - t0
    return ("finished before the phase was seen" if seen is None else
            "finished before the delay") + f" (status {proc.returncode})", time.monotonic() - t0


@dataclass
class Outcome:
    point: KillPoint
    what: str           # killed / finished first / ...
    at_s: float         # seconds from the start to the kill
    problems: list[str]
    rerun: str = ""
    after_next: bool = False   # a run stayed RUNNING until the next tracked stage started

    @property
    def killed(self) -> bool:
        return self.what.startswith("killed")


def run_point(reference: Path, work: Path, point: KillPoint, grace: float = 15.0,
              keep_failed: bool = True, next_stage: str | None = None) -> Outcome:
    """One kill point in ``work`` (a fresh copy of ``reference``): kill, rerun, check.

    When the agent was killed with a stage and the rerun ran no stage (DVC restored the killed
    one from its run cache), nothing could close that stage's run yet: it must then be closed by
    the next tracked stage to start (``next_stage``, forced; every stage reaps dead runs of every
    experiment), and the outcome says so (``after_next``)."""
    from tests.builds import copy_built

    copy_built(reference, work)
    after_next = False
    try:
        what, at = kill_run(work, point)
        rerun, rwlock = "", []
        try:
            try:
                _, out = repro(work, [])
            except RuntimeError as exc:
                if "RWLock-file" not in str(exc):
                    raise
                # DVC rewrites .dvc/tmp/rwlock in place (truncate, then write): a SIGKILL between
                # the two leaves it empty, and every dvc command then fails until it is removed,
                # as DVC's message says. Counted as a failure; the other checks still run.
                rwlock = [f"the rerun failed until .dvc/tmp/rwlock (left corrupt by the killed dvc) "
                          f"was removed: {str(exc).strip().splitlines()[-1][:200]}"]
                (work / ".dvc" / "tmp" / "rwlock").unlink()
                _, out = repro(work, [])
            rerun = _rerun_summary(out)
            problems = rwlock + check(reference, work, grace)
            stuck = [p for p in problems if p.startswith("MLflow run RUNNING")]
            if (stuck and stuck == problems and what == "killed with the agent" and next_stage
                    and rerun.startswith("rerun ran []")):
                repro(work, ["--force", "--single-item", next_stage])
                problems, after_next = check(reference, work, grace), True
        except RuntimeError as exc:
            problems = [f"the rerun failed: {exc}"]
    finally:
        stop_agents(work)
    if not (problems and keep_failed):
        shutil.rmtree(work.parent, ignore_errors=True)
    return Outcome(point, what, at, problems, rerun, after_next)


def _rerun_summary(dvc_output: str) -> str:
    """What the rerun did: the stages it ran, and those it restored from DVC's run cache."""
    from tests.builds import stage_names

    ran = stage_names(dvc_output)
    restored = [s for s in stage_names(dvc_output, cached=True) if s not in ran]
    return f"rerun ran [{' '.join(ran)}] restored [{' '.join(restored)}]"


def summary(outcomes: list[Outcome]) -> str:
    survived = [o for o in outcomes if not o.problems]
    lines = [f"tried {len(outcomes)} kill points, survived {len(survived)}, "
             f"killed mid-run {sum(o.killed for o in outcomes)} "
             f"(the others finished before their moment came and were checked all the same)",
             f"  failed only because the killed dvc left .dvc/tmp/rwlock corrupt (DVC writes it in place): "
             f"{sum(bool(o.problems) and all('rwlock' in p for p in o.problems) for o in outcomes)}",
             f"  of the survivors, {sum(o.after_next for o in survived)} killed the agent with a stage and "
             f"their rerun ran no stage (served from DVC's run cache): that stage's run stayed RUNNING "
             f"until the next tracked stage started and closed it"]
    for phase in PHASES:
        mine = [o for o in outcomes if o.point.phase == phase]
        if mine:
            lines.append(f"  {phase:7s} tried {len(mine):3d}, survived {sum(not o.problems for o in mine):3d}, "
                         f"killed {sum(o.killed for o in mine):3d}, "
                         f"with the agent {sum(o.what == 'killed with the agent' for o in mine):3d}")
    return "\n".join(lines)


def campaign(base: Path, studies: list[str], points: int, seed: int, grace: float = 15.0,
             keep_failed: bool = True, budget_s: float | None = None) -> list[Outcome]:
    from stages.common.runtime.checkout import copy_checkout

    reference = copy_checkout(REPO, base / "reference", profile="smoke", only=studies)
    dag = build_reference(reference)
    stop_agents(reference)
    chosen = choose_points(seed, points, dag)
    outcomes: list[Outcome] = []
    t0 = time.perf_counter()
    for p in chosen:
        if budget_s is not None and time.perf_counter() - t0 > budget_s:
            print(f"stopped after {len(outcomes)} of {len(chosen)} points: the budget of {budget_s:.0f} s "
                  f"(after the reference build) is spent", flush=True)
            break
        o = run_point(reference, base / f"point{p.index:03d}" / "repo", p, grace, keep_failed,
                      next_stage=dag.ledger or dag.order[-1])
        outcomes.append(o)
        verdict = ("FAILED: " + "; ".join(o.problems)[:800] if o.problems else
                   "survived" + (" (a run RUNNING until the next stage)" if o.after_next else ""))
        print(f"point {p.index:3d}: {p.describe():45s} {o.what} at {o.at_s:5.1f}s; {o.rerun}: {verdict}",
              flush=True)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=50, help="kill points to try (default 50)")
    ap.add_argument("--seed", type=int, default=1000, help="seed of the kill points (default 1000)")
    ap.add_argument("--studies", nargs="+", default=["zipf_bigram", "mpo"],
                    help="studies in the copy, with the ledger (default: zipf_bigram, and mpo, which "
                         "trains torch models and logs them to MLflow)")
    ap.add_argument("--grace", type=float, default=15.0,
                    help="seconds the agent gets to close a killed stage's run (default 15)")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="start no point after this many seconds past the reference build")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (and failed points' copies)")
    ap.add_argument("--smoke", action="store_true", help="2 points on mnl_assortment alone, a study of little compute (CI)")
    a = ap.parse_args(argv)
    if a.smoke:
        a.points, a.studies = 2, ["mnl_assortment"]
    print(f"fault campaign: {a.points} points, seed {a.seed}, studies {', '.join(a.studies)} + ledger",
          flush=True)
    t0 = time.perf_counter()
    with scratch("fault-campaign-", keep=a.keep) as base:
        outcomes = campaign(base, a.studies, a.points, a.seed, a.grace, keep_failed=a.keep,
                            budget_s=a.budget_s)
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(summary(outcomes))
    print(f"wall {wall:.0f} s; CPU of the processes it waited for (dvc, stages) "
          f"{ru.ru_utime + ru.ru_stime:.0f} s, of the detached tracking agents {AGENT_CPU[0]:.0f} s")
    return 0 if all(not o.problems for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
