"""Parallel speed-up: independent studies run by the Prefect flow (concurrently, one process
per stage) against `dvc repro` (one stage after another), from scratch, in one run.

    python benchmarks/parallel_speedup.py [--profile default] [--studies N]

For each side a fresh copy of this checkout (no outputs, no DVC cache, no MLflow store) runs
the prepare -> train -> evaluate chains of the independent studies; the ledger, which joins
them, is left out of both. The ratio printed is wall(dvc repro) / wall(flow).

While the repository has fewer independent studies than ``--studies``, the copies get
replicas of a study (``<study>_r2``: the same code and params under another name, writing
their own outputs); the output says so. Replicas measure the orchestration honestly (the
same work, run concurrently or not) but are not different studies.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _bench import env, scratch, stage_metrics, timed  # noqa: E402
from stages.common.checkout import _git, copy_checkout  # noqa: E402
from stages.common.dvcfile import load_stages  # noqa: E402


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
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", f"replica {name} of {study}")


def prepare_copy(base: Path, profile: str, n_studies: int) -> tuple[Path, list[str], list[str]]:
    root = copy_checkout(REPO, base, profile=profile)
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", choices=["smoke", "default", "paper"])
    ap.add_argument("--studies", type=int, default=2, help="independent studies to run (>= 2)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copies")
    a = ap.parse_args(argv)
    with scratch("claimbench-bench-", a.keep) as tmp:
        print(f"machine: {os.cpu_count()} CPU cores; profile {a.profile}; scratch {tmp}")
        seq_root, studies, finals = prepare_copy(tmp / "sequential", a.profile, a.studies)
        par_root, _, _ = prepare_copy(tmp / "flow", a.profile, a.studies)
        real = studies_in(REPO)
        print(f"studies: {', '.join(studies)}" +
              (f"  (replicas of {real[0]}: {', '.join(s for s in studies if s not in real)};"
               f" this repository has {len(real)} independent study so far)" if len(studies) > len(real) else ""))
        print(f"targets: {', '.join(finals)}")

        print("dvc repro (sequential):")
        t_seq, out = timed(["dvc", "repro", *finals], seq_root)
        n_seq = sum(line.startswith("Running stage") for line in out.splitlines())
        print("Prefect flow (independent stages concurrently, one process each):")
        t_par, out = timed([sys.executable, "-m", "flows.pipeline", *finals], par_root)
        result = json.loads(out[out.index("{"):])
        work = {s: m["stage.compute_s"] for s, m in stage_metrics(seq_root).items()}
        print()
        print(f"stages run: dvc repro {n_seq}, flow {len(result['ran'])}")
        print(f"sum of stage compute (dvc repro copy): {sum(work.values()):.1f} s")
        print(f"wall, dvc repro:   {t_seq:7.1f} s")
        print(f"wall, Prefect flow:{t_par:7.1f} s")
        print(f"speed-up (dvc repro / flow): {t_seq / t_par:.2f}x on {os.cpu_count()} cores "
              f"for {len(studies)} independent studies")
        status = subprocess.run(["dvc", "status", *finals], cwd=par_root, env=env(),
                                capture_output=True, text=True).stdout
        print(f"after the flow, dvc status: {status.strip().splitlines()[-1] if status.strip() else '?'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
