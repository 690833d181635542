"""The longest silent stretch of each stage: how long a user watching a run sees nothing.

    python benchmarks/pipeline/silent_stretch.py --run [--profile default] [target ...]
    python benchmarks/pipeline/silent_stretch.py --log run.log          # a log this script wrote
    python benchmarks/pipeline/silent_stretch.py --smoke                # one small study, scratch copy

``--run`` runs ``dvc repro [target ...]`` in a scratch copy of this checkout on the chosen profile
(``stages.common.runtime.checkout.copy_checkout``: the checkout's files are never touched),
stamps every line of its output (stdout and stderr together, unbuffered) with the seconds since
the start as it arrives, keeps that log (``--keep``), and reports. A stage's window runs from
DVC's ``Running stage '...'`` line to the next one (or the end of the run); its silent stretch is
the longest time between two lines inside it, the window's ends included. A stage whose stderr is
not a terminal prints its progress bars as lines (stages/common/runtime/logprogress.py), and a
bar that stops moving is written again every 10 s with how long it has not moved, so this
measures what a log file shows. The budget (issue 43): no stage silent for over 15 s; the
script exits 1 naming those that were.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

LIMIT_S = 15.0
STAGE_LINE = re.compile(r"Running stage '(?:[^']*:)?([^':]+)'")


def stamp_lines(cmd: list[str], cwd: Path, log: Path, env: dict[str, str]) -> int:
    """Run ``cmd``, writing each output line to ``log`` as ``<seconds since start> <line>``;
    returns its exit status."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    with open(log, "w") as out:
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode(errors="replace").rstrip("\n")
            out.write(f"{time.monotonic() - t0:.3f} {line}\n")
            out.flush()
        rc = proc.wait()
        out.write(f"{time.monotonic() - t0:.3f} [end]\n")
    return rc


def parse(log_text: str) -> list[tuple[float, str]]:
    rows = []
    for line in log_text.splitlines():
        t, _, text = line.partition(" ")
        try:
            rows.append((float(t), text))
        except ValueError:
            raise ValueError(f"not a line this script wrote (seconds, a space, the text): {line[:80]!r}") from None
    return rows


def silent_stretches(rows: list[tuple[float, str]]) -> dict[str, dict]:
    """For each stage (in the order DVC ran them): its window's length, the longest stretch with
    no output line, and the line that ended that stretch."""
    out: dict[str, dict] = {}
    current, start, last = None, 0.0, 0.0
    end = rows[-1][0] if rows else 0.0

    def close(at: float) -> None:
        if current is not None:
            gap = at - last
            if gap > out[current]["silent_s"]:
                out[current].update(silent_s=gap, until="(the stage's end)")
            out[current]["wall_s"] = at - start

    for t, text in rows:
        m = STAGE_LINE.search(text)
        if m:
            close(t)
            current, start, last = m.group(1), t, t
            out[current] = {"silent_s": 0.0, "until": "", "wall_s": 0.0}
            continue
        if current is not None:
            gap = t - last
            if gap > out[current]["silent_s"]:
                out[current].update(silent_s=gap, until=text.strip()[:70])
            last = t
    close(end)
    return out


def report(stretches: dict[str, dict], limit: float = LIMIT_S) -> int:
    over = {k: v for k, v in stretches.items() if v["silent_s"] > limit}
    print(f"{'stage':36s} {'wall s':>8s} {'silent s':>9s}  the line that ended the longest silence")
    for name, v in sorted(stretches.items(), key=lambda kv: -kv[1]["silent_s"]):
        print(f"{name:36s} {v['wall_s']:8.1f} {v['silent_s']:9.1f}  {v['until']}")
    print(f"{len(stretches)} stages; longest silence {max((v['silent_s'] for v in stretches.values()), default=0):.1f} s; "
          f"over {limit:.0f} s: {len(over)}" + (f" ({', '.join(sorted(over))})" if over else ""))
    return 1 if over else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="store_true", help="run dvc repro in a scratch copy and measure")
    ap.add_argument("--log", help="measure a log this script wrote earlier")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--only", nargs="*", help="studies the scratch copy keeps (default: all)")
    ap.add_argument("--keep", help="write the time-stamped log here")
    ap.add_argument("--limit", type=float, default=LIMIT_S)
    ap.add_argument("--smoke", action="store_true", help="mnl_assortment on the smoke profile")
    ap.add_argument("targets", nargs="*")
    a = ap.parse_args()
    if a.log:
        return report(silent_stretches(parse(Path(a.log).read_text())), a.limit)
    if not (a.run or a.smoke):
        ap.error("give --run, --log or --smoke")
    from stages.common.runtime.checkout import copy_checkout

    profile, only = ("smoke", ["mnl_assortment"]) if a.smoke else (a.profile, a.only)
    with tempfile.TemporaryDirectory(prefix="silent-") as tmp:
        root = copy_checkout(Path(__file__).resolve().parents[2], Path(tmp) / "repo", profile=profile, only=only)
        log = Path(a.keep) if a.keep else Path(tmp) / "run.log"
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "CLAIMBENCH_TRACKING": os.environ.get("CLAIMBENCH_TRACKING", "off"),
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        print(f"dvc repro {' '.join(a.targets)} in a scratch copy, profile {profile} (log: {log})", flush=True)
        rc = stamp_lines(["dvc", "repro", *a.targets], root, log, env)
        if rc != 0:
            print(log.read_text()[-3000:], file=sys.stderr)
            raise SystemExit(f"dvc repro exited {rc}")
        status = report(silent_stretches(parse(log.read_text())), a.limit)
        return 0 if a.smoke else status          # at smoke size on a shared machine the figures mean nothing


if __name__ == "__main__":
    sys.exit(main())
