"""A no-op `dvc repro` with 38 studies' worth of stages.

    python benchmarks/pipeline/noop_scaling.py [--studies 38] [--profile smoke] [--only STUDY ...]

In a fresh copy of this checkout, ``claimbench new-study`` adds scaffolded studies (three stages
each, their own params file, their lines in the ledger's deps) until there are ``--studies``
studies; the whole pipeline runs once on ``--profile``, then a no-op ``dvc repro`` and a
``dvc status`` run ``--repeats`` times each (medians). The budget (ARCHITECTURE.md) is 3 s at 38 studies.
Scaffolded studies are small (a ridge regression on generated data), but a no-op costs what
DVC reads and hashes, not what a stage computes: the params files it parses, dvc.yaml and
dvc.lock, the deps and outs it checks.

``--smoke`` runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import resource
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.bench import scratch, timed  # noqa: E402
from stages.common.runtime.checkout import copy_checkout, git  # noqa: E402
from stages.common.runtime.dvcfile import load_stages, pipeline_files  # noqa: E402


def studies_in(root: Path) -> list[str]:
    return sorted({n.split("-")[0] for n in load_stages(root) if "-" in n and not n.startswith("corpora-")})


def cpu_timed(cmd: list[str], root: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one quiet run of ``cmd``: CPU is user + sys of the process and its
    children, which load from other jobs on the machine inflates far less than wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(cmd, root, quiet=True)[0]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--studies", type=int, default=38)
    ap.add_argument("--profile", default="smoke", choices=["smoke", "default", "paper"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--only", nargs="+", metavar="STUDY",
                    help="keep just these real studies (and the corpora), e.g. the 15 the budget was set on")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args(argv)
    if a.smoke:                       # one scaffolded study, no real one, no corpora: seconds
        a.studies, a.repeats, a.profile = 1, 1, "smoke"
    with scratch("claimbench-noop-", a.keep) as tmp:
        only = [] if a.smoke else [*a.only, "corpora"] if a.only else None
        root = copy_checkout(REPO, tmp / "repo", profile=a.profile, only=only)
        have = studies_in(root)
        added = [f"scaffold_{i:02d}" for i in range(max(0, a.studies - len(have)))]
        for name in added:
            timed([sys.executable, "-m", "claimbench.cli", "new-study", name], root, quiet=True)
        if added:
            git(root, "add", "-A")
            git(root, "commit", "-qm", "scaffolded studies")
        stages = load_stages(root)
        files = pipeline_files(root)
        size = sum(f.stat().st_size for f in files)
        print(f"{len(have)} studies + {len(added)} scaffolded = {len(studies_in(root))}; {len(stages)} stages; "
              f"{len(files)} dvc.yaml files, {size / 1024:.0f} KB in all", flush=True)
        t_full, _ = timed(["dvc", "repro"], root)
        lock = sum(f.with_name("dvc.lock").stat().st_size for f in files if f.with_name("dvc.lock").exists())
        noop, noop_cpu = zip(*[cpu_timed(["dvc", "repro"], root) for _ in range(a.repeats)])
        status, status_cpu = zip(*[cpu_timed(["dvc", "status"], root) for _ in range(a.repeats)])
        m = statistics.median
        print(f"whole pipeline ({a.profile}): {t_full:.1f} s; dvc.lock files {lock / 1024:.0f} KB in all")
        n = len(have) + len(added)
        budget = 2.0 if n <= 15 else 3.0 if n >= 38 else None      # the two budgets
        verdict = f"   budget {budget:g} s: {'ok' if m(noop) <= budget else 'OVER'}" if budget else ""
        print(f"no-op dvc repro: {m(noop):.2f} s (median of {len(noop)}: {min(noop):.2f}-{max(noop):.2f}){verdict}; "
              f"CPU {m(noop_cpu):.2f} s")
        print(f"dvc status:      {m(status):.2f} s (median of {len(status)}: {min(status):.2f}-{max(status):.2f}); "
              f"CPU {m(status_cpu):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
