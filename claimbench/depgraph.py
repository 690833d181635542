"""Which repository files can change a stage's outputs: the import graph of its module.

A stage's ``deps`` in dvc.yaml name its study's files and the library modules it computes with
(``stages/common/``: data helpers, fits, plots, io, seeding), so that editing one of them re-runs
exactly the stages that use it. They never name the runtime (``stages/common/runtime/``: the
stage wrapper, params validation, tracking) or the tools (``claimbench/``): modules that run
around a stage but cannot change what it writes, so that editing them re-runs nothing. The
folder decides (:data:`INFRASTRUCTURE`); the one exception is a stage's own module (the params
stage runs :mod:`claimbench.params_check`).

:func:`code_deps` walks every ``import`` of the stage's module, those inside functions included
(stages import heavy modules lazily), through study, library and runtime modules alike (what the
runtime imports, such as :mod:`stages.common.seeding`, shapes outputs), and returns the
repository files reached, less the runtime, the tools and package ``__init__.py`` files that hold
no code. ``claimbench deps`` prints the result for every stage, ``claimbench deps --write``
puts it into dvc.yaml, and ``tests/claimbench/test_depgraph.py`` fails when a stage's deps miss one.
A file a stage runs without importing it (a script it starts, a module a subprocess imports)
is named in the stage's ``meta: {runs: [...]}`` in dvc.yaml, and counts with what it imports; a
data file it reads is a dep by hand.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from stages.common.runtime.dvcfile import covered

# Folders whose modules cannot change a stage's outputs: the runtime every stage runs inside
# (validation, the input check, tracking) and the tools (the CLI, this module). The import graph
# is walked through them (what they import from the library, such as stages.common.seeding, does
# shape outputs), but no file in them is a dep, so editing them re-runs nothing.
INFRASTRUCTURE = ("stages/common/runtime/", "claimbench/")
PACKAGES = ("stages", "claimbench")     # the repository's own top-level packages


def is_infrastructure(rel: str) -> bool:
    """Whether the repository file ``rel`` is runtime or tools (never a stage's dep)."""
    return rel.startswith(INFRASTRUCTURE)


_PYTHON_M = re.compile(r"(?:^|\s)python3?\s+-m\s+([\w.]+)")


def stage_module(cmd: str) -> str | None:
    """The module a dvc.yaml ``cmd`` runs (``python -m stages.x.y ...``), or None."""
    m = _PYTHON_M.search(cmd)
    return m.group(1) if m and m.group(1).split(".")[0] in PACKAGES else None


def module_file(root: Path, module: str) -> Path | None:
    """The file that defines ``module`` under ``root`` (a module or a package's __init__)."""
    base = root.joinpath(*module.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _package_of(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1])  # a module's package; for pkg/__init__ it is pkg itself


@lru_cache(maxsize=None)
def _imports(root: Path, path: Path) -> tuple[str, ...]:
    """Every module ``path`` imports (absolute names, relative ones resolved), anywhere in it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _package_of(root, path)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.append(base)
            found += [f"{base}.{a.name}" for a in node.names]   # `from pkg import module`
    return tuple(found)


def module_name(root: Path, path: Path) -> str:
    """The dotted name of the module in ``path`` (a package's name for its ``__init__.py``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Every module of ``package`` (a folder under ``root``) -> the modules of that package it
    imports, anywhere in its code (the parents of an imported module included)."""
    root = root.resolve()
    folder = root.joinpath(*package.split("."))
    mods = {module_name(root, p): p for p in sorted(folder.rglob("*.py"))}
    graph = {}
    for name, path in mods.items():
        targets = set()
        for imported in _imports(root, path):
            parts = imported.split(".")
            targets |= {".".join(parts[:k]) for k in range(1, len(parts) + 1)}
        graph[name] = {t for t in targets if t in mods and t != name}
    return graph


def holds_code(path: Path) -> bool:
    """False for a file of nothing but a docstring, comments and ``from __future__`` imports."""
    tree = ast.parse(path.read_text())
    for i, node in enumerate(tree.body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        return True
    return False


def reached_files(root: Path, module: str) -> set[Path]:
    """Every repository file executed when ``python -m module`` runs: the module (its
    ``__main__`` for a package), its parent packages' ``__init__``, and all they import."""
    root = root.resolve()
    todo = [module]
    if module_file(root, module) is not None and module_file(root, module).name == "__init__.py":
        todo.append(f"{module}.__main__")
    seen_mods: set[str] = set()
    files: set[Path] = set()
    while todo:
        mod = todo.pop()
        if mod in seen_mods or mod.split(".")[0] not in PACKAGES:
            continue
        seen_mods.add(mod)
        parts = mod.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]   # parents run first
        path = module_file(root, mod)
        if path is None:
            continue        # `from pkg import name` where name is not a module
        files.add(path)
        todo += list(_imports(root, path))
    return files


def code_deps(root: Path, module: str, runs: list[str] = ()) -> list[str]:
    """The repository files a stage running ``module`` must list as deps (sorted, relative).

    ``runs``: files the stage runs without importing them (dvc.yaml ``meta: {runs: [...]}``: a
    script it starts, a module a subprocess imports, MLflow's models-from-code file); they and
    what they import count too."""
    root = root.resolve()
    reached = set(reached_files(root, module))
    for rel in runs:
        if not (root / rel).is_file():
            raise FileNotFoundError(f"meta.runs names {rel}, which does not exist")
        reached.add(root / rel)
        if rel.endswith(".py"):
            reached |= reached_files(root, module_name(root, root / rel))
    own = module_file(root, module)
    out = []
    for path in reached:
        rel = path.relative_to(root).as_posix()
        if is_infrastructure(rel) and path != own:      # a stage's own module is its dep wherever it is
            continue
        if path.name == "__init__.py" and not holds_code(path):
            continue
        out.append(rel)
    return sorted(out)


def check_stage(root: Path, deps: list[str], module: str,
                runs: list[str] = ()) -> tuple[list[str], list[str], list[str]]:
    """(missing, infrastructure, stale): files the stage imports (or runs) that its deps do not
    cover; infrastructure files its deps name or cover through a folder; and code deps it neither
    imports nor runs (an edit to them would re-run it for nothing)."""
    need = _needed(root, module, runs)
    missing = [f for f in need if not covered(f, deps)]
    infra = [f for f in infrastructure_files(root) if covered(f, deps) and f not in need]
    stale = [d for d in deps if _is_code(d) and d not in need and not is_infrastructure(d)]
    return missing, infra, stale


def infrastructure_files(root: Path) -> list[str]:
    """Every Python file of the runtime and the tools (relative, sorted)."""
    return sorted(p.relative_to(root).as_posix() for folder in INFRASTRUCTURE
                  for p in (root / folder).rglob("*.py"))


def _is_code(dep: str) -> bool:
    """A dep that the import graph speaks for: a .py file or a folder of the repository's packages."""
    return dep.startswith(tuple(f"{p}/" for p in PACKAGES)) and (dep.endswith(".py") or "." not in Path(dep).name)


def planned_deps(root: Path, current: list[str], module: str, runs: list[str] = ()) -> list[str]:
    """The stage's deps with its code deps replaced by :func:`code_deps` (what it imports and
    runs); data deps and non-Python files stay as they are, after the code. The ``params``
    stage's deps are all computed (every params file and model: see
    :func:`stage_deps`)."""
    if module == PARAMS_CHECK:
        return _needed(root, module, runs)
    return code_deps(root, module, runs) + [d for d in current if not _is_code(d)]


PARAMS_CHECK = "claimbench.params_check"


def _needed(root: Path, module: str, runs: list[str] = ()) -> list[str]:
    """The deps a stage running ``module`` must name: its code deps, or for the ``params`` stage,
    every params file and model (it imports the models by name, which the import graph cannot see)."""
    if module == PARAMS_CHECK:
        return stage_deps(root)
    return code_deps(root, module, runs)


def stage_deps(root: Path) -> list[str]:
    """What the ``params`` stage depends on: every params file, every params model and the code
    both import (from the import graph), its own module and what it imports."""
    from stages.common.runtime.params import study_params_files

    from claimbench.params_check import params_module

    root = root.resolve()
    deps = set(code_deps(root, PARAMS_CHECK))
    for study, path in study_params_files(root).items():
        deps.add(path.relative_to(root).as_posix())
        deps |= set(code_deps(root, params_module(root, study, path)))
    return sorted(deps)


def rewrite_deps(text: str, stage_name: str, deps: list[str]) -> str:
    """dvc.yaml's text with stage ``stage_name``'s ``deps:`` list replaced by ``deps``; the rest
    of the file (order, comments, other stages) untouched (ruamel round-trip)."""
    from stages.common.runtime.params import dump_yaml, round_trip_yaml

    data = round_trip_yaml().load(text)
    stage = ((data or {}).get("stages") or {}).get(stage_name)
    if stage is None:
        raise KeyError(f"dvc.yaml has no stage {stage_name!r}")
    if not isinstance(stage.get("deps"), list):
        raise KeyError(f"stage {stage_name!r} has no `deps:` list in dvc.yaml")
    stage["deps"][:] = deps
    return dump_yaml(data)
