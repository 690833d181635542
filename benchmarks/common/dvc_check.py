"""What a stage's own input check costs against asking DVC.

    python benchmarks/common/dvc_check.py [--stage zipf_bigram-evaluate] [--repeats 3] [--smoke]

Before it computes, every stage checks the inputs other stages made against what dvc.lock recorded
(``stages.common.runtime.stage.check_deps_against_lock``, hashing with ``stages.common.io.dvc_md5``,
hashlib and json). The libraries that do this in DVC are ``dvc status <stage>`` (a subprocess) and
the ``dvc_data`` hashing API (an import in the stage's process). This prints, in this checkout
(its outputs must exist: run ``dvc repro`` first; ``--smoke`` checks the ledger's one input
folder and needs only the committed reports):

- the wall seconds of ``dvc status <stage>`` and of our check of the same stage, in one process;
- the wall seconds a fresh process takes to import ``dvc_data``'s hashing against ``hashlib``/``json``;
- what our check found: no problem means our hash of each input equals the one dvc.lock recorded.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.bench import env  # noqa: E402


def wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=REPO, env=env(), check=True, capture_output=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", default="zipf_bigram-evaluate")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="one repeat, the ledger stage")
    a = ap.parse_args(argv)
    name, repeats = ("ledger", 1) if a.smoke else (a.stage, a.repeats)

    from stages.common.runtime.dvcfile import load_stages
    from stages.common.runtime.stage import check_deps_against_lock, missing_inputs
    from stages.common.runtime.tracking import hash_deps

    stages = load_stages(REPO)
    if name not in stages:
        raise SystemExit(f"no stage {name!r} in this checkout's dvc.yaml files")
    s = stages[name]
    missing = missing_inputs(REPO, name, s.deps, stages)
    if missing:
        raise SystemExit("\n".join(missing))

    def ours() -> list[str]:          # what the stage wrapper does before a stage computes
        return check_deps_against_lock(REPO, name, s.deps, hash_deps(REPO, s.deps), stages)

    ours_s, problems = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        problems = ours()
        ours_s.append(time.perf_counter() - t0)
    status_s = [wall([sys.executable, "-m", "dvc", "status", s.address]) for _ in range(repeats)]
    imp_dvc = [wall([sys.executable, "-c", "import dvc_data.hashfile.build, dvc_data.hashfile.hash"])
               for _ in range(repeats)]
    imp_ours = [wall([sys.executable, "-c", "import hashlib, json"]) for _ in range(repeats)]

    m = statistics.median
    print(f"stage {name}: {len(s.deps)} deps hashed; our check found "
          f"{len(problems)} problem(s){': ' + problems[0] if problems else ''}")
    print(f"our check, in the stage's process: {m(ours_s):.3f} s (median of {repeats})")
    print(f"dvc status {s.address}: {m(status_s):.3f} s (a subprocess); ratio {m(status_s) / max(m(ours_s), 1e-4):.0f}x")
    print(f"importing dvc_data's hashing in a fresh process: {m(imp_dvc):.3f} s; hashlib + json: "
          f"{m(imp_ours):.3f} s; difference {m(imp_dvc) - m(imp_ours):.3f} s a stage")
    return 0


if __name__ == "__main__":
    sys.exit(main())
