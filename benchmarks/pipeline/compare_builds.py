"""Did a change alter any output? Build the whole pipeline at two commits and compare what they made.

    python benchmarks/pipeline/compare_builds.py OLD_REV NEW_REV [--profile smoke] [--keep]
    python benchmarks/pipeline/compare_builds.py --compare DIR_A DIR_B     # two builds already made
    python benchmarks/pipeline/compare_builds.py --smoke                   # two tiny trees (CI)

For a refactor that must not change a result: each commit is checked out in its own git worktree
(its own DVC cache, no MLflow logging: ``CLAIMBENCH_TRACKING=off``) with ``common.profile`` set to
``--profile``, and ``dvc repro`` builds it. Then every file under ``data/`` and ``reports/`` of the
two is compared as the determinism tests compare a re-run (``stages.common.runtime.checkout.comparable``):
byte for byte, but JSON without its wall-time fields and CSV without its wall-time columns. Files that differ on every save by design
are counted apart: MLflow's ``MLmodel`` (a model id and a creation time) and the params marker.
What is left is listed: each must then be explained (a timing column, a moved reference in text).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.bench import env  # noqa: E402

VOLATILE = ("MLmodel", "params.ok")       # files that differ on every save by design


def outputs(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for top in ("data", "reports")
            for p in sorted((root / top).rglob("*")) if p.is_file()}


def compare(a_root: Path, b_root: Path) -> dict[str, list[str]]:
    """{"same": [...], "volatile": [...], "differ": [...], "only_a": [...], "only_b": [...]}"""
    from stages.common.runtime.checkout import comparable

    a, b = outputs(a_root), outputs(b_root)
    out: dict[str, list[str]] = {"same": [], "volatile": [], "differ": [],
                                 "only_a": sorted(set(a) - set(b)), "only_b": sorted(set(b) - set(a))}
    for rel in sorted(set(a) & set(b)):
        same = a[rel].read_bytes() == b[rel].read_bytes()
        if not same and a[rel].suffix in (".json", ".csv"):
            try:
                same = comparable(a[rel]) == comparable(b[rel])
            except ValueError:
                pass
        out["same" if same else "volatile" if rel.endswith(VOLATILE) else "differ"].append(rel)
    return out


def build(rev: str, where: Path, profile: str) -> float:
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(where), rev], cwd=REPO, check=True)
    params = where / "params.yaml"
    from stages.common.runtime.params import set_profile

    set_profile(params, profile)
    t0 = time.perf_counter()
    print(f"building {rev} ({profile}) in {where}", flush=True)
    subprocess.run(["dvc", "repro"], cwd=where, env=env(CLAIMBENCH_TRACKING="off"), check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def report(found: dict[str, list[str]], a: str, b: str) -> None:
    print(f"files in both: {len(found['same']) + len(found['volatile']) + len(found['differ'])}; "
          f"identical (JSON and CSV: wall-time fields aside): {len(found['same'])}; "
          f"differ by design ({', '.join(VOLATILE)}): {len(found['volatile'])}")
    for key, label in (("only_a", f"only in {a}"), ("only_b", f"only in {b}"), ("differ", "DIFFER")):
        print(f"{label}: {len(found[key])}", *found[key], sep="\n  ")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("revs", nargs="*", metavar="REV", help="the two commits to build and compare")
    ap.add_argument("--compare", nargs=2, metavar="DIR", help="compare two builds already made")
    ap.add_argument("--profile", default="smoke", choices=["smoke", "default", "paper"])
    ap.add_argument("--keep", action="store_true", help="keep the worktrees")
    ap.add_argument("--smoke", action="store_true", help="two tiny hand-made trees: checks the script still runs (CI)")
    a = ap.parse_args(argv)
    if a.smoke:
        with tempfile.TemporaryDirectory() as tmp:
            for side, secs in (("a", 1.5), ("b", 2.5)):
                root = Path(tmp) / side
                (root / "reports/s").mkdir(parents=True)
                (root / "data/s").mkdir(parents=True)
                (root / "reports/s/metrics.json").write_text(json.dumps({"auc": 0.9, "train_s": secs}))
                (root / "data/s/MLmodel").write_text(f"model_uuid: {side}\n")
                (root / "data/s/table.csv").write_text(f"x,y\n1,{side}\n")
            found = compare(Path(tmp) / "a", Path(tmp) / "b")
            report(found, "a", "b")
            assert found["same"] == ["reports/s/metrics.json"] and found["differ"] == ["data/s/table.csv"]
        return 0
    if a.compare:
        report(compare(Path(a.compare[0]), Path(a.compare[1])), *a.compare)
        return 0
    if len(a.revs) != 2:
        ap.error("name two commits (OLD_REV NEW_REV), or --compare DIR_A DIR_B")
    base = Path(tempfile.mkdtemp(prefix="claimbench-compare-"))
    roots = [base / f"{i}-{rev.replace('/', '_')}" for i, rev in enumerate(a.revs)]
    try:
        for rev, root in zip(a.revs, roots):
            print(f"  {rev}: {build(rev, root, a.profile):.0f} s", flush=True)
        report(compare(*roots), *a.revs)
    finally:
        if not a.keep:
            for root in roots:
                if root.exists():
                    subprocess.run(["git", "worktree", "remove", "--force", str(root)], cwd=REPO)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("DVC_NO_ANALYTICS", "1")
    sys.exit(main())
