"""Where a study's `dvc repro` time goes: each stage's window, and how much of it is imports.

    python benchmarks/pipeline/stage_floor.py autoopt [--profile smoke] [--merge A,B,C] [--keep]
    python benchmarks/pipeline/stage_floor.py --smoke     # mnl_assortment on the smoke profile

In a scratch copy of this checkout on ``--profile`` (the study's stages only, tracked through the
tracking agent as a user's run is; the agent is started first and its start timed apart, so the
first stage does not carry it):

1. ``dvc repro stages/<study>/dvc.yaml``, each output line stamped as it arrives: a stage's
   **window** runs from DVC's ``Running stage`` line to the next one (DVC's own work for the
   stage included); its **body** is what the stage printed as ``done in`` (from the stage frame's
   start to its end: not the interpreter's start nor the stage module's own imports).
2. Each stage's command again, alone, in the order DVC ran them: once plain, for its **wall**
   time as one process; once under ``python -X importtime``, for its **imports**, the sum of the
   top-level entries of Python's import timer (every module the process imported, lazily inside
   functions too). A module imported by several forked workers of one stage counts once, as they
   import side by side. After each stage, ``dvc commit`` records its outputs so the next stage
   accepts its inputs.

A stage's imports are its floor: what it costs however little it computes. ``--merge A,B,C``
estimates what running stages A, B and C as one process would save at least: the imports they
share (the sum of each one's minus those of their union); DVC's own work for the stages it would
no longer run comes on top.
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.bench import env, scratch  # noqa: E402
from benchmarks.pipeline.silent_stretch import parse, silent_stretches, stamp_lines  # noqa: E402

IMPORT_LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \|( +)(\S+)")
DONE_LINE = re.compile(r"\[([^\]]+)\] done in ([0-9.]+)s")
AGENT_UP = ("from pathlib import Path\n"
            "from stages.common.runtime.tracking_agent import connect\n"
            "connect(Path.cwd()).close()\n")


def top_level_imports(stderr: str) -> dict[str, float]:
    """{module: seconds} of the top-level entries of ``-X importtime`` output (cumulative times;
    a nested entry is inside its parent's). A module that appears twice (two forked workers)
    keeps its larger time."""
    out: dict[str, float] = {}
    for line in stderr.splitlines():
        m = IMPORT_LINE.match(line)
        if m and len(m.group(2)) == 1:
            out[m.group(3)] = max(out.get(m.group(3), 0.0), int(m.group(1)) / 1e6)
    return out


def bodies(rows: list[tuple[float, str]]) -> dict[str, float]:
    """{stage: seconds} from each stage's ``[stage] done in Xs`` line."""
    return {m.group(1): float(m.group(2)) for _, text in rows if (m := DONE_LINE.search(text))}


def merge_saving(imports: dict[str, dict[str, float]], names: list[str]) -> float:
    """Seconds of imports that ``names`` share: what one process running these stages would not
    import again."""
    missing = [n for n in names if n not in imports]
    if missing:
        raise SystemExit(f"--merge: no such stage in this run: {', '.join(missing)} (ran: {', '.join(imports)})")
    union: dict[str, float] = {}
    for n in names:
        for mod, s in imports[n].items():
            union[mod] = max(union.get(mod, 0.0), s)
    return sum(sum(imports[n].values()) for n in names) - sum(union.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study", nargs="?")
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--merge", help="comma-separated stage names: estimate one process for them")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("--smoke", action="store_true", help="mnl_assortment on the smoke profile")
    a = ap.parse_args()
    if a.smoke:
        a.study, a.profile = "mnl_assortment", "smoke"
    if not a.study:
        ap.error("name a study (or --smoke)")
    if not (REPO / "stages" / a.study / "dvc.yaml").is_file():
        raise SystemExit(f"no study {a.study!r}: stages/{a.study}/dvc.yaml does not exist")
    from stages.common.runtime.checkout import copy_checkout
    from stages.common.runtime.dvcfile import load_stages

    names = [s.strip() for s in (a.merge or "").split(",") if s.strip()]
    unknown = sorted(set(names) - set(load_stages(REPO)))
    if unknown:
        raise SystemExit(f"--merge: no such stage: {', '.join(unknown)}")
    with scratch("floor-", keep=a.keep) as tmp:
        root = copy_checkout(REPO, tmp / "repo", profile=a.profile, only=[a.study])
        e = env(PYTHONUNBUFFERED="1")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", AGENT_UP], cwd=root, env=e, check=True)
        agent_s = time.perf_counter() - t0
        print(f"dvc repro stages/{a.study}/dvc.yaml in a scratch copy, profile {a.profile}", flush=True)
        log = tmp / "repro.log"
        if stamp_lines(["dvc", "repro", f"stages/{a.study}/dvc.yaml"], root, log, e) != 0:
            raise SystemExit(f"dvc repro failed:\n{log.read_text()[-3000:]}")
        rows = parse(log.read_text())
        stages = load_stages(root)
        windows = {k: v["wall_s"] for k, v in silent_stretches(rows).items()
                   if k in stages and stages[k].file == f"stages/{a.study}/dvc.yaml"}
        body = bodies(rows)
        order = list(windows)

        walls: dict[str, float] = {}
        imports: dict[str, dict[str, float]] = {}
        for n in order:
            argv = shlex.split(stages[n].cmd)
            if argv[0] != "python":
                raise SystemExit(f"{n}: its cmd does not start with python: {stages[n].cmd}")
            print(f"  {n}: alone, then under -X importtime", flush=True)
            for flags in ([], ["-X", "importtime"]):
                t0 = time.perf_counter()
                proc = subprocess.run([sys.executable, *flags, *argv[1:]], cwd=root, env=e,
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    raise SystemExit(f"{n} failed on its own ({proc.returncode}):\n{proc.stderr[-3000:]}")
                if flags:
                    imports[n] = top_level_imports(proc.stderr)
                else:
                    walls[n] = time.perf_counter() - t0
                subprocess.run(["dvc", "commit", "-f", stages[n].address], cwd=root, env=e, check=True,
                               capture_output=True)

    cols = (("window", 7), ("body", 6), ("wall", 6), ("imports", 8))
    print(f"\n{'stage':32s} " + " ".join(f"{k:>{w}s}" for k, w in cols) + "  share  largest imports")
    tot = dict.fromkeys((k for k, _ in cols), 0.0)
    for n in order:
        row = {"window": windows[n], "body": body.get(n, 0.0), "wall": walls[n], "imports": sum(imports[n].values())}
        for k, v in row.items():
            tot[k] += v
        top = sorted(imports[n].items(), key=lambda kv: -kv[1])[:4]
        print(f"{n:32s} " + " ".join(f"{row[k]:{w}.1f}" for k, w in cols)
              + f"  {row['imports'] / row['wall']:4.0%}  " + ", ".join(f"{m} {s:.2f}" for m, s in top))
    print(f"{'all ' + str(len(order)) + ' stages':32s} " + " ".join(f"{tot[k]:{w}.1f}" for k, w in cols)
          + f"  {tot['imports'] / tot['wall']:4.0%}")
    print(f"the tracking agent's start (before the run, once a run): {agent_s:.1f} s")
    if names:
        shared = merge_saving(imports, names)
        print(f"one process for {', '.join(names)}: at least {shared:.1f} s of imports saved "
              f"(the windows {tot['window']:.1f} -> {tot['window'] - shared:.1f} s, DVC's work for "
              f"{len(names) - 1} stage(s) less on top)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
