"""What tracking and orchestration add to a stage, and what a no-op `dvc repro` costs.

    python benchmarks/overhead.py [--profile default] [--repeats 5]

In a fresh copy of this checkout:

1. ``dvc repro`` of the whole pipeline on ``--profile``; every stage's MLflow run records its
   own timings: ``stage.setup_s`` (input checks, hashing deps, opening the run),
   ``stage.compute_s`` (the stage's body) and ``stage.logging_s`` (logging metrics and outs).
2. A no-op ``dvc repro`` (nothing changed), ``--repeats`` times.
3. A tiny stage (the ledger: it reads metrics and writes three small files), ``--repeats``
   times each: bare (``CLAIMBENCH_TRACKING=off``), under the tracking helper, and alone
   under the Prefect flow (its ephemeral server, ``dvc status``, the MLflow parent runs and
   ``dvc commit`` included; the ledger's title param is changed each time so it is stale).

Overheads: tracking, per stage = (tracked - bare) of the tiny stage (importing MLflow,
opening the store) + that stage's own setup and logging time; orchestration, per flow run =
(flow - tracked) of the tiny stage. Each is printed in seconds and as a share of the
default-profile stages' compute. Budgets (ARCHITECTURE.md): overhead <= 10% of a stage,
no-op <= 3 s.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _bench import stage_metrics, timed  # noqa: E402
from stages.common.checkout import copy_checkout  # noqa: E402

TINY = "ledger"


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def spread(xs: list[float]) -> str:
    return f"median {median(xs):6.2f} s  (min {min(xs):.2f}, max {max(xs):.2f}, n={len(xs)})"


def set_title(root: Path, profile: str, i: int) -> None:
    import re

    p = root / "params.yaml"
    text = p.read_text()
    new, n = re.subn(rf'(?m)^(\s+{profile}:\s+\{{build: \{{title: ")[^"]*(")',
                     rf"\g<1>overhead run {i}\g<2>", text, count=1)
    if n != 1:
        raise SystemExit("params.yaml: ledger title line not found")
    p.write_text(new)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", choices=["smoke", "default", "paper"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    a = ap.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="claimbench-overhead-"))
    try:
        root = copy_checkout(REPO, scratch / "repo", profile=a.profile)
        print(f"machine: {os.cpu_count()} CPU cores; profile {a.profile}; copy {root}")

        print(f"1. the whole pipeline, {a.profile} profile:")
        t_full, _ = timed(["dvc", "repro"], root)
        stages = stage_metrics(root)

        print(f"2. no-op dvc repro x{a.repeats}:")
        noop = [timed(["dvc", "repro"], root, quiet=i > 0)[0] for i in range(a.repeats)]

        print(f"3. the tiny stage ({TINY}) x{a.repeats}: bare, tracked, under the flow")
        cmd = [sys.executable, "-m", "stages.ledger.build"]
        bare = [timed(cmd, root, quiet=i > 0, CLAIMBENCH_TRACKING="off")[0] for i in range(a.repeats)]
        tracked = [timed(cmd, root, quiet=i > 0)[0] for i in range(a.repeats)]
        flow, flow_stage = [], []
        for i in range(a.repeats):
            set_title(root, a.profile, i)
            t, out = timed([sys.executable, "-m", "flows.pipeline", TINY], root, quiet=i > 0)
            res = json.loads(out[out.index("{"):])
            if res["ran"] != [TINY]:
                raise SystemExit(f"the flow ran {res['ran']}, expected [{TINY!r}]")
            flow.append(t)
            flow_stage.append(res["stage_wall_s"][TINY])

        fixed = median(tracked) - median(bare)
        per_run = median(flow) - median(tracked)
        print()
        print(f"full dvc repro ({a.profile}): {t_full:.1f} s")
        print(f"no-op dvc repro:          {spread(noop)}   budget 3 s: "
              f"{'ok' if median(noop) <= 3 else 'OVER'}")
        print(f"tiny stage, bare:         {spread(bare)}")
        print(f"tiny stage, tracked:      {spread(tracked)}")
        print(f"tiny stage, in the flow:  {spread(flow)}  (the stage process itself: "
              f"median {median(flow_stage):.2f} s)")
        print(f"tracking, fixed per stage (tracked - bare): {fixed:.2f} s")
        print(f"orchestration, per flow run (flow - tracked): {per_run:.2f} s")
        print()
        print(f"per stage of the {a.profile} profile (tracking overhead = fixed + the stage's setup + logging):")
        print(f"  {'stage':24s} {'compute s':>10s} {'setup s':>8s} {'logging s':>9s} {'overhead s':>10s} {'share':>7s}")
        tot_c = tot_o = 0.0
        for name, m in stages.items():
            over = fixed + m.get("stage.setup_s", 0.0) + m.get("stage.logging_s", 0.0)
            tot_c += m["stage.compute_s"]
            tot_o += over
            share = over / m["stage.compute_s"] if m["stage.compute_s"] > 0 else float("inf")
            print(f"  {name:24s} {m['stage.compute_s']:10.2f} {m.get('stage.setup_s', 0):8.2f} "
                  f"{m.get('stage.logging_s', 0):9.2f} {over:10.2f} {share:7.1%}")
        print(f"  {'all stages':24s} {tot_c:10.2f} {'':8s} {'':9s} {tot_o:10.2f} {tot_o / tot_c:7.1%}")
        print()
        print(f"tracking overhead, whole pipeline: {tot_o / tot_c:.1%} of stage compute (budget 10%: "
              f"{'ok' if tot_o / tot_c <= 0.10 else 'OVER'})")
        big = max(stages.items(), key=lambda kv: kv[1]["stage.compute_s"])
        print(f"orchestration overhead per flow run: {per_run:.2f} s = {per_run / tot_c:.1%} of the "
              f"pipeline's stage compute, {per_run / big[1]['stage.compute_s']:.1%} of its longest "
              f"stage ({big[0]}) (budget 10%: {'ok' if per_run / tot_c <= 0.10 else 'OVER'})")
    finally:
        if not a.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
