"""The layout of stages/autoopt: no import cycle among its modules; a
sub-package imports only itself, earlier sub-packages of the chain (data -> m1 -> m2 -> m3 ->
chain) and the shared top-level modules; the files a stage runs without importing them are in its
deps. The import graph is :func:`claimbench.depgraph.import_graph` (read with ``ast``; imports
inside functions count); that every stage's deps cover what it imports is checked for all studies
in tests/claimbench/test_depgraph.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from claimbench.depgraph import import_graph as graph_of
from stages.common.runtime.dvcfile import load_stages

from .conftest import REPO

PACKAGE = "stages.autoopt"
ROOT = REPO / "stages" / "autoopt"
ORDER = ("data", "m1", "m2", "m3", "chain")      # the chain's order: a later one may import an earlier one
# what a stage runs without an import statement, so the import graph cannot see it
HIDDEN = {
    "autoopt-m1-train": ["stages/autoopt/m1/pyfunc.py"],        # MLflow's models-from-code file
    "autoopt-m2-train": ["stages/autoopt/m2/pyfunc.py"],
    "autoopt-m2-evaluate": ["stages/autoopt/m2/sandbox_worker.py"],   # the worker script the sandbox starts
    "autoopt-e2e": ["stages/autoopt/m2/sandbox_worker.py", "stages/autoopt/m3/bobd.py",   # SOLVE_TARGET,
                    "stages/autoopt/m3/core.py", "stages/autoopt/m3/baselines.py",      # run in the sandbox,
                    "stages/autoopt/m3/pyomo_casadi.py"],                              # and what it imports
}


def import_graph(root: Path = REPO, package: str = PACKAGE) -> dict[str, set[str]]:
    return graph_of(root, package)


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


# --------------------------------------------------------------------------- the checks
def test_the_graph_reader_sees_imports_inside_functions(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("from ..a import f\n")
    (pkg / "c.py").write_text("import pkg.sub.b\n")
    g = import_graph(tmp_path, "pkg")
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


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_files_a_stage_runs_without_importing_them_are_its_deps(name):
    deps = load_stages(REPO)[name].deps
    for rel in HIDDEN[name]:
        assert (REPO / rel).is_file() and rel in deps, (name, rel)


def test_solve_entry_point_stays_at_its_path():
    from stages.autoopt import solve
    from stages.autoopt.chain import solve as tool

    assert solve.main is tool.main
