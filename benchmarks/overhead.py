"""What tracking and orchestration add to a stage, and what a no-op `dvc repro` costs.

    python benchmarks/overhead.py [--profile default] [--repeats 3]

In a fresh copy of this checkout, after one ``dvc repro`` of the whole pipeline on
``--profile`` (so every input exists):

1. A no-op ``dvc repro`` (nothing changed), ``--repeats`` times.
2. Every stage run by its command, bare (``CLAIMBENCH_TRACKING=off``: no MLflow at all) and
   under the tracking helper (the stage's MLflow run, its params, metrics, curves, outs).
   Stages shorter than 20 s run ``--repeats`` times each way (medians), longer ones once.
   Tracking overhead of a stage = tracked - bare, wall clock of the whole process.
3. The tiny stage (the ledger) alone under the Prefect flow, ``--repeats`` times, twice:
   with Prefect's ephemeral server (what ``claimbench flow`` starts when no server is
   configured) and against a running ``prefect server`` (what scheduled deployment runs and
   ``claimbench stack`` use). Orchestration overhead per flow run = flow - tracked stage:
   the server, ``dvc status``, the MLflow parent runs, ``dvc commit``, Prefect's task states.
   The ledger's title param changes each time, so that it is stale.

Budgets (ARCHITECTURE.md): overhead <= 10% of a stage's compute, no-op <= 3 s.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _bench import env, scratch, timed  # noqa: E402
from flows.stack import free_port, stop_trees, wait_http  # noqa: E402
from stages.common.checkout import copy_checkout  # noqa: E402
from stages.common.dvcfile import load_stages  # noqa: E402

TINY = "ledger"
SHORT_S = 20.0


def spread(xs: list[float]) -> str:
    if len(xs) == 1:
        return f"{xs[0]:7.2f} s (n=1)"
    return f"{statistics.median(xs):7.2f} s (median of {len(xs)}: {min(xs):.2f} to {max(xs):.2f})"


def set_title(root: Path, profile: str, i: int) -> None:
    import re

    p = root / "params.yaml"
    new, n = re.subn(rf'(?m)^(\s+{profile}:\s+\{{build: \{{title: ")[^"]*(")',
                     rf"\g<1>overhead run {i}\g<2>", p.read_text(), count=1)
    if n != 1:
        raise SystemExit("params.yaml: ledger title line not found")
    p.write_text(new)


def flow_runs(root: Path, profile: str, repeats: int, offset: int, **extra_env: str) -> list[float]:
    out = []
    for i in range(repeats):
        set_title(root, profile, offset + i)
        t, stdout = timed([sys.executable, "-m", "flows.pipeline", TINY], root, quiet=i > 0, **extra_env)
        res = json.loads(stdout[stdout.index("{"):])
        if res["ran"] != [TINY]:
            raise SystemExit(f"the flow ran {res['ran']}, expected [{TINY!r}]")
        out.append(t)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", choices=["smoke", "default", "paper"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    a = ap.parse_args(argv)
    med = statistics.median
    with scratch("claimbench-overhead-", a.keep) as tmp:
        root = copy_checkout(REPO, tmp / "repo", profile=a.profile)
        print(f"machine: {os.cpu_count()} CPU cores; profile {a.profile}; copy {root}")
        print(f"the whole pipeline once ({a.profile} profile):")
        t_full, _ = timed(["dvc", "repro"], root)

        print(f"1. no-op dvc repro x{a.repeats}:")
        noop = [timed(["dvc", "repro"], root, quiet=i > 0)[0] for i in range(a.repeats)]

        print("2. every stage, bare and tracked:")
        rows = []
        for name, s in load_stages(root).items():
            cmd = s.cmd.split()
            if cmd[0] == "python":
                cmd[0] = sys.executable
            bare = [timed(cmd, root, CLAIMBENCH_TRACKING="off")[0]]
            n = a.repeats if bare[0] < SHORT_S else 1
            bare += [timed(cmd, root, quiet=True, CLAIMBENCH_TRACKING="off")[0] for _ in range(n - 1)]
            tracked = [timed(cmd, root, quiet=i > 0)[0] for i in range(n)]
            rows.append((name, bare, tracked))

        print(f"3. the tiny stage ({TINY}) under the flow, x{a.repeats} each:")
        flow_eph = flow_runs(root, a.profile, a.repeats, 0)
        port = free_port()
        server = subprocess.Popen([str(Path(sys.executable).parent / "prefect"), "server", "start",
                                   "--host", "127.0.0.1", "--port", str(port), "--no-ui"],
                                  env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        try:
            api = f"http://127.0.0.1:{port}/api"
            wait_http(f"{api}/health", 180, server)
            flow_srv = flow_runs(root, a.profile, a.repeats, 100, PREFECT_API_URL=api)
        finally:
            import psutil

            stop_trees([psutil.Process(server.pid)])

        print()
        print(f"whole pipeline, dvc repro ({a.profile}): {t_full:.1f} s")
        print(f"no-op dvc repro: {spread(noop)}   budget 3 s: {'ok' if med(noop) <= 3 else 'OVER'}")
        print()
        print("tracking overhead per stage (wall clock of the stage's process, tracked - bare):")
        print(f"  {'stage':22s} {'bare':>36s} {'tracked':>36s} {'overhead':>9s} {'share':>7s}")
        tot_b = tot_o = 0.0
        tiny_tracked = None
        for name, bare, tracked in rows:
            b, t = med(bare), med(tracked)
            tot_b += b
            tot_o += t - b
            if name == TINY:
                tiny_tracked = t
            print(f"  {name:22s} {spread(bare):>36s} {spread(tracked):>36s} {t - b:8.2f}s {(t - b) / b:7.1%}")
        print(f"  {'whole pipeline':22s} {tot_b:34.2f} s {'':>36s} {tot_o:8.2f}s {tot_o / tot_b:7.1%}")
        print()
        for label, runs in (("ephemeral Prefect server", flow_eph), ("running Prefect server", flow_srv)):
            over = med(runs) - tiny_tracked
            print(f"tiny stage in the flow, {label}: {spread(runs)}; orchestration overhead "
                  f"{over:.2f} s per flow run = {over / tot_b:.1%} of the pipeline's bare wall time")
        print()
        print(f"budget check (10%): tracking, whole pipeline {tot_o / tot_b:.1%} "
              f"{'ok' if tot_o / tot_b <= 0.10 else 'OVER'}; per stage: " +
              ", ".join(f"{n} {(med(t) - med(b)) / med(b):.0%}" for n, b, t in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
