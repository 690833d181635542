"""What a stage costs besides its compute, and what a no-op `dvc repro` costs.

    python benchmarks/pipeline/overhead.py [--repeats 5] [--profile smoke] [--skip-noop]

In a fresh copy of this checkout:

1. **A nil stage** (``nilbench-nothing``: validates its params, writes one small metrics file,
   nothing else; added to the copy with ``claimbench new-study``) run as DVC runs a stage, one
   process each time, ``--repeats`` times each way (medians):
   * ``python -c pass`` (the interpreter alone) and ``import`` of the stage module;
   * bare: ``CLAIMBENCH_TRACKING=off`` (no MLflow at all);
   * tracked in-process (``CLAIMBENCH_TRACKING=inprocess``): the stage imports MLflow, opens the
     sqlite store, creates its run, logs, closes — how every stage logged before the agent;
   * tracked through the tracking agent (the default): cold (no agent yet: this stage starts it)
     and warm (an agent is up, as for every stage of a pipeline run after the first).
   The fixed cost of tracking is tracked - bare; the budget (ARCHITECTURE.md) is 1 s. The
   tracked run's own timings (``stage.setup_s``, ``stage.logging_s``) are read back from MLflow.
2. **A no-op ``dvc repro``** after one full ``dvc repro`` of the copy on ``--profile`` (``--repeats`` times),
   and ``dvc status``; the budget is 2 s. ``benchmarks/pipeline/noop_scaling.py`` does the same with 38
   studies' worth of stages.

``--smoke`` runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.bench import scratch, timed  # noqa: E402
from stages.common.runtime.checkout import copy_checkout, git  # noqa: E402

NOOP_BUDGET_S = 3.0     # the house's no-op budget with 38 studies (2 s was the budget at 15)

NIL_STAGE = """
  nilbench-nothing:
    wdir: ../..
    cmd: python -m stages.nilbench.nothing
    deps:
      - stages/nilbench/nothing.py
      - stages/nilbench/params.py
    params:
      - common
      - stages/nilbench/params.json:
          - nilbench.${common.profile}.evaluate
    metrics:
      - reports/nilbench/nothing.json:
          cache: false
"""
NIL_MODULE = '''"""A stage with no compute: params validated, one small metrics file written."""
from stages.common.io import write_json
from stages.common.runtime.stage import stage

from .params import PARAMS


def main() -> None:
    with stage("nilbench", "nothing", PARAMS) as ctx:
        write_json(ctx.path("reports/nilbench/nothing.json"), {"nothing": 1.0})


if __name__ == "__main__":
    main()
'''


def med(xs: list[float]) -> str:
    return f"{statistics.median(xs):6.2f} s (median of {len(xs)}: {min(xs):.2f}-{max(xs):.2f})"


def add_nil_stage(root: Path) -> None:
    timed([sys.executable, "-m", "claimbench.cli", "new-study", "nilbench"], root, quiet=True)
    (root / "stages/nilbench/nothing.py").write_text(NIL_MODULE)
    from stages.common.runtime.params import dump_yaml, round_trip_yaml

    dvcfile = root / "stages/nilbench/dvc.yaml"                      # the study's own dvc.yaml
    data = round_trip_yaml().load(dvcfile.read_text())
    data["stages"].update(round_trip_yaml().load(NIL_STAGE))        # beside the study's stages
    dvcfile.write_text(dump_yaml(data))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the nil stage")


def stop_agents(root: Path) -> None:
    """End the tracking agents of the checkout ``root`` (so its next tracked stage starts cold);
    an agent of another checkout (a pipeline running beside the benchmark) is left alone."""
    import psutil

    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info["cmdline"] or []
        if "stages.common.runtime.tracking_agent" in cmd and "--root" in cmd \
                and Path(cmd[cmd.index("--root") + 1]).resolve() == root.resolve():
            p.send_signal(signal.SIGTERM)
            p.wait(10)


def nil_stage(root: Path, repeats: int) -> dict[str, list[float]]:
    stage_cmd = [sys.executable, "-m", "stages.nilbench.nothing"]
    out: dict[str, list[float]] = {k: [] for k in ("python", "import", "bare", "inprocess", "agent cold", "agent warm")}
    for i in range(repeats):
        out["python"].append(timed([sys.executable, "-c", "pass"], root, quiet=True)[0])
        out["import"].append(timed([sys.executable, "-c", "import stages.nilbench.nothing"], root, quiet=True)[0])
        out["bare"].append(timed(stage_cmd, root, quiet=True, CLAIMBENCH_TRACKING="off")[0])
        out["inprocess"].append(timed(stage_cmd, root, quiet=True, CLAIMBENCH_TRACKING="inprocess")[0])
        stop_agents(root)
        out["agent cold"].append(timed(stage_cmd, root, quiet=True)[0])
        out["agent warm"].append(timed(stage_cmd, root, quiet=True)[0])
    return out


def logged_timings(root: Path) -> dict[str, float]:
    from mlflow.tracking import MlflowClient

    c = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns.db'}")
    exp = c.get_experiment_by_name("nilbench")
    runs = c.search_runs([exp.experiment_id], order_by=["attributes.start_time DESC"], max_results=1)
    return {k: v for k, v in runs[0].data.metrics.items() if k.startswith("stage.")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--profile", default="smoke", choices=["smoke", "default", "paper"],
                    help="profile of the full run before the no-op repro")
    ap.add_argument("--skip-noop", action="store_true", help="only the nil stage")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args(argv)
    if a.smoke:
        a.repeats, a.skip_noop = 1, True
    with scratch("claimbench-overhead-", a.keep) as tmp:
        root = copy_checkout(REPO, tmp / "repo", profile=a.profile)
        add_nil_stage(root)
        print(f"machine: {os.cpu_count()} CPU cores; copy {root}", flush=True)
        print(f"1. the nil stage, x{a.repeats} each way", flush=True)
        nil = nil_stage(root, a.repeats)
        stop_agents(root)
        m = statistics.median
        print()
        print("per-stage fixed cost, a stage with no compute (wall clock of its process):")
        for k, xs in nil.items():
            print(f"  {k:11s} {med(xs)}")
        print(f"  tracked - bare: in-process {m(nil['inprocess']) - m(nil['bare']):.2f} s, "
              f"agent warm {m(nil['agent warm']) - m(nil['bare']):.2f} s, "
              f"agent cold {m(nil['agent cold']) - m(nil['bare']):.2f} s   (budget 1 s, warm: "
              f"{'ok' if m(nil['agent warm']) - m(nil['bare']) <= 1 else 'OVER'})")
        print(f"  the last tracked run's own timings (MLflow): {logged_timings(root)}")
        if a.skip_noop:
            return 0
        print(f"\n2. the whole pipeline once ({a.profile}), then a no-op dvc repro x{a.repeats}", flush=True)
        t_full, _ = timed(["dvc", "repro"], root)
        noop = [timed(["dvc", "repro"], root, quiet=True)[0] for _ in range(a.repeats)]
        status = [timed(["dvc", "status"], root, quiet=True)[0] for _ in range(a.repeats)]
        print(f"  whole pipeline ({a.profile}): {t_full:.1f} s")
        print(f"  no-op dvc repro: {med(noop)}   budget {NOOP_BUDGET_S:g} s: {'ok' if m(noop) <= NOOP_BUDGET_S else 'OVER'}")
        print(f"  dvc status:      {med(status)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
