"""Run benchmarks and record what they printed in ``reports/benchmarks.md``, one section each.

    python benchmarks/report.py overhead noop_scaling          # run these two, refresh their sections
    python benchmarks/report.py save_pyfunc -- --repeats 5     # arguments after -- go to the script
    python benchmarks/report.py --list                         # the sections the report holds

Measurements belong to a run, not to prose: each section holds the command, the day, the commit
(and whether the tree was dirty), the machine (cores, CPU, load average when it started), the wall
time and the script's own output, verbatim. Sections of benchmarks not named are kept as they
were, so the report gathers runs of different days, each labelled. A script that fails leaves its
section as it was and makes this command exit 1.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "reports" / "benchmarks.md"
HEADER = ("# Benchmarks\n\nWritten by `python benchmarks/report.py NAME ...`, one section per benchmark, each "
          "with the run that measured it.\nEvery figure below was printed by the script named in its "
          "section; re-run it to refresh the section.\n")
SECTION = re.compile(r"^## (\S+)\n(.*?)(?=^## |\Z)", re.M | re.S)


def script(name: str) -> Path:
    """The benchmark script ``name`` names (``overhead``, ``pipeline/overhead`` or a path)."""
    for cand in (Path(name), REPO / "benchmarks" / name, REPO / "benchmarks" / f"{name}.py"):
        if cand.is_file() and cand.suffix == ".py":
            return cand.resolve()
    raise SystemExit(f"no benchmark script {name!r} under benchmarks/ (see `ls benchmarks`)")


def sections(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2).rstrip() + "\n" for m in SECTION.finditer(text)}


def render(found: dict[str, str]) -> str:
    return HEADER + "".join(f"\n## {name}\n{body}" for name, body in sorted(found.items()))


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown CPU") if Path("/proc/cpuinfo").exists() else "unknown CPU"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores ({cpu}), load average {load} at the start"


def run_one(path: Path, args: list[str]) -> tuple[int, str, float]:
    """Run a benchmark, echoing its output as it comes; returns (exit status, output, wall s)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(path), *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    return proc.wait(), "".join(lines), time.perf_counter() - t0


def section_body(path: Path, args: list[str], output: str, wall: float) -> str:
    rel = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)
    from stages.common.runtime.checkout import git

    dirty = " (uncommitted changes)" if git(REPO, "status", "--porcelain", "--untracked-files=no").strip() else ""
    command = " ".join(["python", rel, *args])
    return (f"\n`{command}`, {dt.date.today().isoformat()}, commit {git(REPO, 'rev-parse', '--short', 'HEAD').strip()}{dirty}; "
            f"{machine()}; {wall:.0f} s wall.\n\n```text\n{output.rstrip()}\n```\n")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="benchmark scripts to run (name under benchmarks/, .py optional)")
    ap.add_argument("--list", action="store_true", help="list the report's sections and exit")
    a = ap.parse_args(argv)
    found = sections(REPORT.read_text()) if REPORT.exists() else {}
    if a.list or not a.names:
        print("\n".join(sorted(found)) or "(no sections yet)")
        return 0
    failed = []
    for name in a.names:
        path = script(name)
        bench = REPO / "benchmarks"
        key = (path.relative_to(bench) if path.is_relative_to(bench) else Path(path.name)).with_suffix("").as_posix()
        print(f"== {key}", flush=True)
        rc, output, wall = run_one(path, extra)
        if rc:
            failed.append(f"{key} (exit {rc})")
            continue
        found[key] = section_body(path, extra, output, wall)
        from stages.common.io import write_text     # atomic, so a stopped run leaves the old report

        write_text(REPORT, render(found))
    if failed:
        print(f"failed, sections kept as they were: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"{REPORT}: {', '.join(sorted(found))}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
