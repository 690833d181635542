"""The layout of stages/autoopt (issue 19, item 7): no import cycle among its modules; a
sub-package imports only itself, earlier sub-packages of the chain (data -> m1 -> m2 -> m3 ->
chain) and the shared top-level modules; and each autoopt stage in dvc.yaml lists as deps every
stages/autoopt file it imports, directly or through other autoopt modules (imports inside
functions count), and no other.

The import graph is read with ``ast`` (nothing is imported): every ``import`` / ``from ... import``
anywhere in a module, relative ones resolved; importing ``a.b.c`` also imports the packages
``a.b`` and ``a`` (their ``__init__.py``).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from .conftest import REPO

PACKAGE = "stages.autoopt"
ROOT = REPO / "stages" / "autoopt"
ORDER = ("data", "m1", "m2", "m3", "chain")      # the chain's order: a later one may import an earlier one
# for the dvc deps, what the code runs without an import statement: for every importer ...
HIDDEN = {
    "stages.autoopt.m2.sandbox": {"stages.autoopt.m2.sandbox_worker"},   # the worker script it starts
    "stages.autoopt.chain.chain": {"stages.autoopt.m3.bobd"},            # SOLVE_TARGET, run in the sandbox
}
# ... and for a stage's own module only (its main() writes the MLflow models-from-code file)
STAGE_FILES = {
    "stages.autoopt.m1.train": {"stages.autoopt.m1.pyfunc"},
    "stages.autoopt.m2.train": {"stages.autoopt.m2.pyfunc"},
}


def modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under root (a package's name for __init__.py)."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        parts = [package] + list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _with_parents(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:k]) for k in range(1, len(parts) + 1)}


def import_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (anywhere in its code)."""
    mods = modules(root, package)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for a in node.names:
                    targets |= _with_parents(a.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[:len(here) - (node.level - 1)]
                    src = ".".join(base + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                targets |= _with_parents(src)
                targets |= {f"{src}.{a.name}" for a in node.names}      # `from pkg import module`
        graph[name] = {t for t in targets if t in mods and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def closure(start: str, graph: dict[str, set[str]], hidden: dict[str, set[str]] = HIDDEN) -> set[str]:
    """start and everything it imports (or runs, ``hidden``), transitively."""
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo += sorted(graph.get(m, set()) | hidden.get(m, set()))
    return seen


def dep_files(start: str, root: Path = ROOT, package: str = PACKAGE) -> list[str]:
    """The stages/autoopt files a stage running module ``start`` needs, as dvc.yaml paths."""
    mods = modules(root, package)
    needed = closure(start, import_graph(root, package)) | STAGE_FILES.get(start, set())
    return sorted(mods[m].relative_to(REPO).as_posix() for m in needed)


def autoopt_stages() -> dict[str, dict]:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    return {name: s for name, s in stages.items() if name.startswith("autoopt-")}


# --------------------------------------------------------------------------- the checks
def test_the_graph_reader_sees_imports_inside_functions(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("from ..a import f\n")
    (pkg / "c.py").write_text("import pkg.sub.b\n")
    g = import_graph(pkg, "pkg")
    assert g["pkg.a"] == {"pkg", "pkg.sub", "pkg.sub.b"}
    assert g["pkg.sub.b"] == {"pkg", "pkg.a"}
    assert g["pkg.c"] == {"pkg", "pkg.sub", "pkg.sub.b"}
    assert cycles(g) == [["pkg.a", "pkg.sub.b"]]


def test_no_import_cycle_among_autoopt_modules():
    found = cycles(import_graph())
    assert not found, "import cycles in stages/autoopt:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_a_subpackage_imports_only_earlier_ones():
    bad = []
    for mod, targets in import_graph().items():
        parts = mod.split(".")
        if len(parts) < 4:                         # the shared top-level modules
            continue
        for t in targets:
            tp = t.split(".")
            if len(tp) >= 3 and tp[2] in ORDER and ORDER.index(tp[2]) > ORDER.index(parts[2]):
                bad.append(f"{mod} imports {t}")
    assert not bad, "\n".join(sorted(bad))


def test_subpackages_are_the_chain_steps():
    subs = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert subs == sorted(ORDER)
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert top == ["__init__.py", "params.py", "paths.py", "solve.py", "tokenizer.py"]


def test_hidden_edges_name_real_modules():
    mods = modules()
    for src, targets in (HIDDEN | STAGE_FILES).items():
        assert src in mods and targets <= set(mods), (src, targets)


@pytest.mark.parametrize("name", sorted(autoopt_stages()))
def test_dvc_deps_list_exactly_the_autoopt_files_a_stage_imports(name):
    spec = autoopt_stages()[name]
    cmd = spec["cmd"]
    assert cmd.startswith("python -m stages.autoopt."), cmd
    module = cmd.split()[-1]
    assert module in modules(), f"{name}: {cmd} runs no module of stages/autoopt"
    listed = [d for d in spec["deps"] if str(d).startswith("stages/autoopt/")]
    assert sorted(listed) == dep_files(module), name
    assert len(set(listed)) == len(listed), f"{name}: a dep listed twice"
    assert "stages/common" in spec["deps"]


def test_solve_entry_point_stays_at_its_path():
    from stages.autoopt import solve
    from stages.autoopt.chain import solve as tool

    assert solve.main is tool.main
