"""The ``claimbench`` command line.

    claimbench run <study> <step>     run one stage's command (what dvc.yaml calls)
    claimbench validate [study ...]   validate params.yaml (all profiles) and claims files
    claimbench stages                 list dvc.yaml's stages, their order and GPU marks
    claimbench check [claims.json]    exit 1 when a `must` claim fails or was not evaluated
    claimbench flow [--profile P]     run the pipeline as a Prefect flow (flows/pipeline.py)
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path


def _cmd_run(args: argparse.Namespace) -> int:
    module = f"stages.{args.study}.{args.step}"
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError:
        print(f"error: no stage module {module} (see `claimbench stages`)", file=sys.stderr)
        return 2
    mod.main()
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .claims import load_claims
    from .params import ParamsError, load_common, load_study, read_params_file, repo_root

    root = repo_root()
    data = read_params_file()
    problems = 0
    try:
        load_common(data)
    except ParamsError as err:
        print(err, file=sys.stderr)
        return 2
    studies = args.studies or sorted(p.parent.name for p in (root / "stages").glob("*/params.py")
                                     if p.parent.name != "common")
    for study in studies:
        try:
            model = importlib.import_module(f"stages.{study}.params")
            cls = getattr(model, "PARAMS")  # each study's params.py names its model
            load_study(study, cls, data)
            claims = root / "stages" / study / "claims.yaml"
            if claims.exists():
                load_claims(claims)
            print(f"ok: {study}")
        except (ParamsError, AttributeError, ModuleNotFoundError) as err:
            problems += 1
            print(f"{study}: {err}", file=sys.stderr)
    return 2 if problems else 0


def _cmd_stages(args: argparse.Namespace) -> int:
    from .dvcfile import load_stages, upstream

    stages = load_stages()
    edges = upstream(stages)
    for name, s in stages.items():
        after = ", ".join(sorted(edges[name])) or "-"
        print(f"{name:28s} gpu={'yes' if s.gpu else 'no ':3s} after: {after}")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from .claims import failed_musts

    path = Path(args.claims)
    if not path.exists():
        print(f"error: {path} not found; run `dvc repro` first", file=sys.stderr)
        return 2
    rows = json.loads(path.read_text())
    bad = failed_musts(rows)
    for r in rows:
        mark = {True: "holds", False: "FAILS", None: "NOT RUN"}[r["holds"]]
        print(f"{mark:8s} {r['level']:6s} {r['study']}/{r['id']}: measured {r['measured']}, "
              f"needs {r['metric']} {r['op']} {r['threshold']}")
    if bad:
        print(f"\n{len(bad)} must claim(s) do not hold: " +
              ", ".join(f"{r['study']}/{r['id']}" for r in bad), file=sys.stderr)
        return 1
    print(f"\nall {sum(r['level'] == 'must' for r in rows)} must claims hold")
    return 0


def _cmd_flow(args: argparse.Namespace) -> int:
    from flows.pipeline import pipeline

    result = pipeline(profile=args.profile, targets=args.targets or None)
    return 0 if result.get("failed", []) == [] else 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="claimbench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run one stage")
    p.add_argument("study")
    p.add_argument("step")
    p.set_defaults(fn=_cmd_run)
    p = sub.add_parser("validate", help="validate params.yaml and claims files")
    p.add_argument("studies", nargs="*")
    p.set_defaults(fn=_cmd_validate)
    p = sub.add_parser("stages", help="list the DAG")
    p.set_defaults(fn=_cmd_stages)
    p = sub.add_parser("check", help="fail when a must claim fails")
    p.add_argument("claims", nargs="?", default="reports/claims.json")
    p.set_defaults(fn=_cmd_check)
    p = sub.add_parser("flow", help="run the Prefect pipeline flow")
    p.add_argument("--profile", default=None, choices=["smoke", "default", "paper"])
    p.add_argument("targets", nargs="*")
    p.set_defaults(fn=_cmd_flow)
    args = parser.parse_args(argv)
    sys.exit(args.fn(args))


if __name__ == "__main__":
    main()
