"""The ``claimbench`` command line.

    claimbench run <study> <step> [args ...]
                                      run one stage's command (what dvc.yaml calls), or a study's
                                      tool given its arguments (e.g. `claimbench run autoopt solve
                                      IMAGE`: image -> LaTeX -> Pyomo -> solution)
    claimbench validate [study ...]   validate the params files (all profiles) and claims files
                                      (--format: lay the params files out again, after
                                      `dvc exp run -S` wrote one on a single line)
    claimbench stages                 list dvc.yaml's stages, their order and GPU marks
    claimbench deps [--write] [stage ...]
                                      the code each stage imports (its deps in its dvc.yaml), and
                                      what is missing; --write puts the import graph's list in
    claimbench check [claims.json]    exit 1 when a `must` claim fails or was not evaluated
    claimbench diff [REV] [--page]    claims whose verdict, measured figure or check changed since
                                      git REV (default HEAD), with their revisions; exit 1 when a
                                      must claim stopped holding
    claimbench provenance [study ...] [--backfill]
                                      each claim's check against its git history: a must changed
                                      after `registered` without a revision, an id reused for a
                                      different metric (exit 1); --backfill writes a missing
                                      `registered` (the day the claim's check first appeared)
    claimbench new-study NAME [--title T] [--paper P]
                                      write a new study's skeleton: stages/NAME (its dvc.yaml
                                      included), tests/NAME, and its place in the ledger
    claimbench remote [add PATH|URL [--name N] [--local]]
                                      the default DVC remote (a local folder, or s3/gs/ssh with
                                      their extras) that machines share data outputs through
    claimbench flow [--profile P]     run the pipeline as a Prefect flow (flows/pipeline.py)
    claimbench stack up|status|run|down   the local Prefect server + worker + MLflow server
    claimbench deploy                 create the Prefect deployments (flows/deploy.py)
    claimbench ui [--port 5000]       the MLflow UI on 127.0.0.1 over the project's store (--host
                                      elsewhere warns: it has no login, anyone reaching it can
                                      read and change the store)
    claimbench plots [--check]        write the offline template `dvc plots show` uses (or check it
                                      and that every declared plot has its file and columns)
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
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


def _format_params_file(path) -> None:
    """Rewrite a valid params file in :func:`params.dump_params`'s layout; its values unchanged."""
    from stages.common.io import write_text
    from stages.common.runtime.params import dump_params, read_params_file

    data = read_params_file(path)
    text = dump_params(data) + "\n"
    if text != path.read_text():
        write_text(path, text)
        print(f"formatted: {path}")


def _cmd_validate(args: argparse.Namespace) -> int:
    from stages.common.claims import load_claims
    from stages.common.runtime.params import ParamsError, load_common, read_params, repo_root, study_params_files
    from claimbench.params_check import check_study

    root = repo_root()
    files = study_params_files(root)
    problems = 0
    try:
        load_common(read_params(root, studies=[]))
    except ParamsError as err:
        print(err, file=sys.stderr)
        return 2
    for study in args.studies or sorted(files):
        try:
            check_study(root, study, files)
            if args.format:
                _format_params_file(files[study])
            claims = files[study].parent / "claims.yaml"
            if claims.exists():
                load_claims(claims)
            print(f"ok: {study}")
        except ParamsError as err:
            problems += 1
            print(f"{study}: {err}", file=sys.stderr)
    return 2 if problems else 0


def _cmd_stages(args: argparse.Namespace) -> int:
    from stages.common.runtime.dvcfile import load_stages, upstream

    from graphlib import TopologicalSorter

    stages = load_stages()
    edges = upstream(stages)
    # upstream first: an order `dvc repro` may run them in
    done = TopologicalSorter({n: sorted(edges[n]) for n in sorted(stages)}).static_order()
    for name in done:
        s = stages[name]
        up = sorted(edges[name])
        after = ", ".join(up) if len(up) <= 4 else f"{len(up)} stages"
        print(f"{name:26s} {s.file:34s} gpu={'yes' if s.gpu else 'no ':3s} after: {after or '-'}")
    return 0


def _cmd_deps(args: argparse.Namespace) -> int:
    from claimbench.depgraph import check_stage, planned_deps, rewrite_deps, stage_module
    from stages.common.runtime.dvcfile import load_stages
    from stages.common.runtime.params import repo_root

    root = repo_root()
    stages = load_stages(root)
    unknown = [n for n in args.stages if n not in stages]
    if unknown:
        print(f"error: no stage {', '.join(unknown)} in the pipeline (see `claimbench stages`)", file=sys.stderr)
        return 2
    texts: dict[str, str] = {}
    bad = 0
    written: set[tuple[str, str]] = set()
    for name in args.stages or list(stages):
        s = stages[name]
        module = stage_module(s.cmd)
        if module is None:
            continue
        runs = s.meta.get("runs", [])
        if args.write:
            key = s.group or name            # a matrix stage's members share one entry in dvc.yaml
            new = planned_deps(root, s.deps, module, runs)
            if new != s.deps and (s.file, key) not in written:
                written.add((s.file, key))
                texts[s.file] = rewrite_deps(texts.get(s.file) or (root / s.file).read_text(), key, new)
                print(f"{key}: deps rewritten in {s.file} ({len(new)})")
            continue
        missing, infra, stale = check_stage(root, s.deps, module, runs)
        status = "ok" if not (missing or infra or stale) else "NEEDS EDIT"
        print(f"{name} ({module}): {status}")
        for f in missing:
            print(f"  missing dep: {f}")
        if infra:
            print(f"  infrastructure in deps (an edit to it would re-run the stage): {', '.join(infra)}")
        if stale:
            print(f"  code it neither imports nor runs (meta.runs): {', '.join(stale)}")
        bad += bool(missing or infra or stale)
    if args.write:
        from stages.common.io import write_text

        for file, text in texts.items():
            write_text(root / file, text)
        return 0
    return 1 if bad else 0


def _cmd_new_study(args: argparse.Namespace) -> int:
    from stages.common.runtime.params import repo_root
    from claimbench.scaffold import ScaffoldError, new_study

    root = repo_root()
    try:
        written = new_study(root, args.name, args.title, args.paper)
    except ScaffoldError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(root)}")
    print(f"\nnext: `dvc repro` (it runs the new study's stages and the ledger); then replace the skeleton's "
          f"experiment and its placeholder claim (stages/{args.name}/claims.yaml; docs/STUDIES.md has "
          f"the checks)")
    return 0


def store_line(root: Path) -> str | None:
    """Whether this checkout's MLflow store holds the runs the ledger names (stages/ledger/runs.json):
    machine-dependent, so said when a command runs, never written into the committed ledger."""
    from stages.ledger.runs import local_store, store_text   # the ledger's own module (not a study)

    record = root / "stages/ledger/runs.json"
    if not record.exists():
        return None
    data = json.loads(record.read_text())
    return store_text(local_store(root, data), data)


def _cmd_check(args: argparse.Namespace) -> int:
    from stages.common.claims import failed_musts, verdict_of

    path = Path(args.claims)
    if not path.exists():
        print(f"error: {path} not found; run `dvc repro` first", file=sys.stderr)
        return 2
    try:
        rows = json.loads(path.read_text())
    except ValueError:
        print(f"error: {path} is not the ledger's JSON; `claimbench check` reads reports/claims.json "
              f"(what `dvc repro` writes), not a study's claims.yaml; one study: "
              f"`claimbench check --study NAME`", file=sys.stderr)
        return 2
    if args.study:
        rows = [r for r in rows if r["study"] == args.study]
        if not rows:
            print(f"error: no claims of study {args.study!r} in {path}", file=sys.stderr)
            return 2
    bad = failed_musts(rows)
    from stages.common.runtime.params import repo_root

    line = store_line(repo_root())
    if line:
        print(f"runs: {line}")
    for r in rows:
        v = verdict_of(r)
        mark = v if v in ("holds", "retired") else v.upper()
        print(f"{mark:12s} {r['level']:6s} {r['study']}/{r['id']}: measured {r['measured']}, "
              f"needs {r['metric']} {r['op']} {r['threshold']}")
    if bad:
        print(f"\n{len(bad)} must claim(s) do not hold: " +
              ", ".join(f"{r['study']}/{r['id']} ({verdict_of(r)})" for r in bad), file=sys.stderr)
        return 1
    print(f"\nall {sum(r['level'] == 'must' and verdict_of(r) != 'retired' for r in rows)} must claims hold")
    return 0




def is_loopback(host: str) -> bool:
    """True for an address (or ``localhost``) that only this machine can reach."""
    import ipaddress

    if host.strip("[]").lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:          # another host name: it may resolve to a public address
        return False


def ui_host_warning(host: str, port: int) -> str | None:
    """What `claimbench ui --host HOST` must say when HOST is not loopback; None when it is."""
    if is_loopback(host):
        return None
    where = "every network interface of this machine" if host in ("0.0.0.0", "::", "[::]", "") else host
    return (f"WARNING: the MLflow UI will listen on {where} (port {port}), not on 127.0.0.1. It has no "
            f"login: anyone who can reach that address can read the project's MLflow store AND write "
            f"to it (change or delete runs, experiments and registered models). Use it only on a "
            f"network you trust; the default (--host 127.0.0.1) is reachable from this machine only.")


def ui_command(root: Path, host: str = "127.0.0.1", port: int = 5000) -> list[str]:
    """`mlflow ui` over the project's store (sqlite + mlartifacts/), loopback only by default, one
    worker (a browser or two on a 2-core workstation; MLflow's default is 4)."""
    exe = Path(sys.executable).parent / "mlflow"
    return [str(exe) if exe.exists() else "mlflow", "ui",
            "--backend-store-uri", f"sqlite:///{(root / 'mlruns.db').as_posix()}",
            "--default-artifact-root", (root / "mlartifacts").as_uri(),
            "--host", host, "--port", str(port), "--workers", "1"]


def ui_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The UI server's environment: telemetry off, and MLflow 3.17's job runner off (it starts a
    job server and seven huey consumers for GenAI jobs this project never submits: 10 processes
    and ~2.4 GB against 2 and ~0.5 GB without, measured in docs/audits/ux-security.md section 7)."""
    return {**(os.environ if environ is None else environ), "MLFLOW_DISABLE_TELEMETRY": "true",
            "DO_NOT_TRACK": "true", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}


def ui_landing(root: Path, base: str, study: str | None) -> str:
    """Where ``claimbench ui`` points the browser: the study's runs with its claims view, or the
    list of experiments (never MLflow's GenAI home page); an unknown study is a ValueError naming
    those there are."""
    links = dict(experiment_links(root, base))
    if study is None:
        return f"{base.rstrip('/')}/#/experiments?workflowType=machine_learning"
    if study not in links:
        raise ValueError(f"no experiment {study!r} in {root / 'mlruns.db'} (there: "
                         f"{', '.join(links) or 'none yet: run a stage or `dvc repro` first'})")
    return links[study]


def experiment_links(root: Path, base: str) -> list[tuple[str, str]]:
    """(experiment, link) for each active experiment of the project's store: links that open it
    on its runs with the ``claims`` view (MLflow 3.17's UI otherwise lands on its GenAI overview;
    :func:`stages.common.runtime.registry.runs_url`). Read with sqlite3, so nothing imports MLflow here."""
    import sqlite3

    from stages.common.runtime.registry import runs_url

    db = root / "mlruns.db"
    if not db.exists():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        rows = con.execute("SELECT experiment_id, name FROM experiments "
                           "WHERE lifecycle_stage = 'active' ORDER BY name").fetchall()
    return [(name, runs_url(base, str(eid))) for eid, name in rows if name != "Default"]


def _cmd_ui(args: argparse.Namespace) -> int:
    import subprocess

    from stages.common.runtime.params import repo_root

    root = repo_root()
    if not (root / "mlruns.db").exists():
        print(f"note: {root / 'mlruns.db'} does not exist yet; run a stage or `dvc repro` first",
              file=sys.stderr)
    warning = ui_host_warning(args.host, args.port)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    cmd = ui_command(root, args.host, args.port)
    base = f"http://{args.host}:{args.port}"
    try:
        landing = ui_landing(root, base, args.study)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    line = store_line(root)
    if line:
        print(f"runs: {line}")
    print(f"MLflow UI on {base} (Ctrl-C stops it)", flush=True)
    for name, url in experiment_links(root, base):
        print(f"  {name:24s} {url}")
    print(f"opening {landing}", flush=True)
    proc = subprocess.Popen(cmd, cwd=root, env=ui_env())
    try:
        if not args.no_browser:
            _open_when_up(base, landing, proc)
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        return 0


def _open_when_up(base: str, url: str, proc) -> None:
    """Open ``url`` in the user's browser once the server answers (nothing when it exits or
    does not answer within 120 s: ``proc.wait()`` then reports it)."""
    import webbrowser

    from flows.stack import StackError, wait_http

    try:
        wait_http(f"{base}/health", 120, proc)
    except StackError:
        return
    webbrowser.open(url)


def _cmd_diff(args: argparse.Namespace) -> int:
    from stages.ledger.diff import DiffError, run   # the ledger's own module (not a study)

    from stages.common.runtime.params import repo_root

    try:
        return run(repo_root(), args.rev, args.rtol, args.all, args.json, args.page)
    except DiffError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def _cmd_provenance(args: argparse.Namespace) -> int:
    from stages.common.runtime.params import repo_root
    from claimbench.provenance import backfill_registered, is_shallow, study_problems

    root = repo_root()
    if is_shallow(root):
        print("error: a shallow clone has no history to read: `git fetch --unshallow` first", file=sys.stderr)
        return 2
    files = {p.parent.name: p for p in sorted(root.glob("stages/*/claims.yaml"))}
    unknown = [s for s in args.studies if s not in files]
    if unknown:
        print(f"error: no study {unknown[0]!r} with a claims.yaml (studies: {', '.join(files)})", file=sys.stderr)
        return 2
    problems = []
    for study in args.studies or list(files):
        if args.backfill:
            for cid, day in backfill_registered(root, files[study]).items():
                print(f"{study}/{cid}: registered {day}")
        problems += study_problems(root, files[study])
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"ok: {len(args.studies or files)} claims file(s): every must registered, no check changed "
              f"without a revision, no id reused")
    return 1 if problems else 0


def _cmd_plots(args: argparse.Namespace) -> int:
    from claimbench.dvc_plots import TEMPLATE, check_template, declared_plots, plot_problems, write_template
    from stages.common.runtime.params import repo_root

    if args.check:      # the template is current, and every declared plot can draw from the workspace
        plots = declared_plots(repo_root())
        problems = [p for p in [check_template(), *plot_problems(repo_root(), plots)] if p]
        for problem in problems:
            print(problem, file=sys.stderr)
        if not problems:
            print(f"ok: {TEMPLATE.name} is current; {len(plots)} declared plots have their files and columns")
        return 1 if problems else 0
    path = write_template()
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB): `dvc plots show` and `dvc plots diff` use it")
    return 0


def _cmd_remote(args: argparse.Namespace) -> int:
    from stages.common.runtime.params import repo_root
    from stages.common.runtime.remote import RemoteError, add, default, url_of

    root = repo_root()
    if args.action == "add":
        if not args.url:
            print("error: claimbench remote add needs a PATH or URL", file=sys.stderr)
            return 2
        try:
            stored = add(root, args.url, args.name, args.local)
        except RemoteError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        where = ".dvc/config.local (this clone)" if args.local else ".dvc/config (commit it to share)"
        print(f"default remote {args.name}: {stored}, in {where}")
        return 0
    name = default(root)
    print(f"default remote {name}: {url_of(root, name)}" if name else
          "no default remote (claimbench remote add PATH|URL)")
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
    p = sub.add_parser("validate", help="validate the params files and claims files")
    p.add_argument("studies", nargs="*")
    p.add_argument("--format", action="store_true",
                   help="then lay each valid params file out again (one key a line, short lists "
                        "on one line): `dvc exp run -S` writes the file it edits on a single line")
    p.set_defaults(fn=_cmd_validate)
    p = sub.add_parser("stages", help="list the DAG")
    p.set_defaults(fn=_cmd_stages)
    p = sub.add_parser("deps", help="check (or --write) each stage's code deps against its imports")
    p.add_argument("stages", nargs="*")
    p.add_argument("--write", action="store_true", help="rewrite the code deps in dvc.yaml")
    p.set_defaults(fn=_cmd_deps)
    p = sub.add_parser("new-study", help="write the skeleton of a new study and wire it into dvc.yaml")
    p.add_argument("name", help="the study's folder name, e.g. jsp_multipolicy")
    p.add_argument("--title", default="", help="one line: the paper's central claim")
    p.add_argument("--paper", default="", help="authors, title (venue, arXiv id)")
    p.set_defaults(fn=_cmd_new_study)
    p = sub.add_parser("check", help="fail when a must claim fails")
    p.add_argument("claims", nargs="?", default="reports/claims.json")
    p.add_argument("--study", default="", help="only this study's claims")
    p.set_defaults(fn=_cmd_check)
    p = sub.add_parser("diff", help="claims that changed verdict, figure or check since a git revision")
    p.add_argument("rev", nargs="?", default="HEAD", help="git revision of the ledger to compare with")
    p.add_argument("--all", action="store_true", help="list unchanged claims too")
    p.add_argument("--json", action="store_true", help="print the changes as JSON")
    p.add_argument("--rtol", type=float, default=1e-6, help="relative change below which a figure is the same")
    p.add_argument("--page", action="store_true", help="also write reports/claims-diff.html for the ledger page")
    p.set_defaults(fn=_cmd_diff)
    p = sub.add_parser("provenance", help="check each claim's registration and revisions against git history")
    p.add_argument("studies", nargs="*", help="studies to check (default: all)")
    p.add_argument("--backfill", action="store_true", help="write a missing `registered` from git history")
    p.set_defaults(fn=_cmd_provenance)
    p = sub.add_parser("remote", help="show or set the default DVC remote (data shared between machines)")
    p.add_argument("action", nargs="?", choices=["add", "show"], default="show")
    p.add_argument("url", nargs="?", help="a local folder, or s3://, gs://, ssh:// (with the extra installed)")
    p.add_argument("--name", default="storage", help="the remote's name in DVC's config (default: storage)")
    p.add_argument("--local", action="store_true", help="write .dvc/config.local (this clone only)")
    p.set_defaults(fn=_cmd_remote)
    for name, text in (
            ("flow", "run the Prefect pipeline flow (claimbench flow --help)"),
            ("stack", "start/stop the local Prefect + MLflow stack: up|status|run|down"),
            ("deploy", "create the Prefect deployments on $PREFECT_API_URL")):
        sub.add_parser(name, help=text)     # dispatched before parsing (see PASS_THROUGH)
    p = sub.add_parser("ui", help="the MLflow UI over the project's store, on 127.0.0.1")
    p.add_argument("--host", default="127.0.0.1",
                   help="default 127.0.0.1 (this machine only); another address warns: the UI has no "
                        "login, so anyone reaching it can read and write the store")
    p.add_argument("--port", type=int, default=5000)
    p.add_argument("study", nargs="?", help="open the browser on this study's runs (default: the list of studies)")
    p.add_argument("--no-browser", action="store_true", help="print the links only")
    p.set_defaults(fn=_cmd_ui)
    p = sub.add_parser("plots", help="write the offline HTML template of `dvc plots show` (vega inlined)")
    p.add_argument("--check", action="store_true", help="exit 1 when the template is stale or a declared plot cannot draw")
    p.set_defaults(fn=_cmd_plots)
    args = parser.parse_args(argv)
    sys.exit(args.fn(args))


if __name__ == "__main__":
    main()
