"""The ``claimbench`` command line.

    claimbench run <study> <step> [args ...]
                                      run one stage's command (what dvc.yaml calls), or a study's
                                      tool given its arguments (e.g. `claimbench run autoopt solve
                                      IMAGE`: image -> LaTeX -> Pyomo -> solution)
    claimbench validate [study ...]   validate params.yaml (all profiles) and claims files
    claimbench stages                 list dvc.yaml's stages, their order and GPU marks
    claimbench check [claims.json]    exit 1 when a `must` claim fails or was not evaluated
    claimbench flow [--profile P]     run the pipeline as a Prefect flow (flows/pipeline.py)
    claimbench stack up|status|run|down   the local Prefect server + worker + MLflow server
    claimbench deploy                 create the Prefect deployments (flows/deploy.py)
    claimbench ui [--port 5000]       the MLflow UI on 127.0.0.1 over the project's store
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
    sys.argv = [module, *args.args]      # a tool reads its own arguments; a stage takes none
    rc = mod.main()
    return rc if isinstance(rc, int) else 0


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




def ui_command(root: Path, host: str = "127.0.0.1", port: int = 5000) -> list[str]:
    """`mlflow ui` over the project's store (sqlite + mlartifacts/), loopback only by default."""
    exe = Path(sys.executable).parent / "mlflow"
    return [str(exe) if exe.exists() else "mlflow", "ui",
            "--backend-store-uri", f"sqlite:///{(root / 'mlruns.db').as_posix()}",
            "--default-artifact-root", (root / "mlartifacts").as_uri(),
            "--host", host, "--port", str(port)]


def _cmd_ui(args: argparse.Namespace) -> int:
    import os
    import subprocess

    from .params import repo_root

    root = repo_root()
    if not (root / "mlruns.db").exists():
        print(f"note: {root / 'mlruns.db'} does not exist yet; run a stage or `dvc repro` first",
              file=sys.stderr)
    cmd = ui_command(root, args.host, args.port)
    print(f"MLflow UI on http://{args.host}:{args.port} (Ctrl-C stops it)", flush=True)
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    try:
        return subprocess.call(cmd, cwd=root, env=env)
    except KeyboardInterrupt:
        return 0


PASS_THROUGH = {"flow": "flows.pipeline", "stack": "flows.stack", "deploy": "flows.deploy"}


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in PASS_THROUGH:   # these own their options (and --help)
        sys.exit(importlib.import_module(PASS_THROUGH[argv[0]]).main(argv[1:]))
    parser = argparse.ArgumentParser(prog="claimbench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run one stage, or a study's tool with its arguments")
    p.add_argument("study")
    p.add_argument("step")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments of a tool (stages take none)")
    p.set_defaults(fn=_cmd_run)
    p = sub.add_parser("validate", help="validate params.yaml and claims files")
    p.add_argument("studies", nargs="*")
    p.set_defaults(fn=_cmd_validate)
    p = sub.add_parser("stages", help="list the DAG")
    p.set_defaults(fn=_cmd_stages)
    p = sub.add_parser("check", help="fail when a must claim fails")
    p.add_argument("claims", nargs="?", default="reports/claims.json")
    p.set_defaults(fn=_cmd_check)
    for name, text in (
            ("flow", "run the Prefect pipeline flow (claimbench flow --help)"),
            ("stack", "start/stop the local Prefect + MLflow stack: up|status|run|down"),
            ("deploy", "create the Prefect deployments on $PREFECT_API_URL")):
        sub.add_parser(name, help=text)     # dispatched before parsing (see PASS_THROUGH)
    p = sub.add_parser("ui", help="the MLflow UI over the project's store, on 127.0.0.1")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5000)
    p.set_defaults(fn=_cmd_ui)
    args = parser.parse_args(argv)
    sys.exit(args.fn(args))


if __name__ == "__main__":
    main()
