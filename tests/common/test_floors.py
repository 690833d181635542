"""The floors of the house, kept by test: every import points down or along, never up, and no
module imports itself back through others.

From the ground up:

0. ``stages/common/`` (the library: what stages compute with; DVC deps)
1. ``stages/common/runtime/`` (what a stage runs inside; never a dep)
2. the studies ``stages/<study>/``, the corpora's stages ``stages/corpora/`` and ``stages/ledger/``
   (none imports another: tests/common/test_layout.py)
3. ``flows/`` (the Prefect flow)
4. ``claimbench/`` (the tools: the CLI, the scaffold, deps, the params stage)

Every import counts, those inside functions included (stages import heavy modules lazily), and
``importlib.import_module`` of a constant name.
"""
from __future__ import annotations

import ast
from functools import lru_cache

import networkx as nx
import pytest

from claimbench.depgraph import _imports, module_file, module_name

from tests.helpers import REPO, calls

PACKAGES = ("stages", "flows", "claimbench")


def floor(module: str) -> int:
    parts = module.split(".")
    if parts[0] == "claimbench":
        return 4
    if parts[0] == "flows":
        return 3
    if parts[:3] == ["stages", "common", "runtime"]:
        return 1
    if parts[:2] == ["stages", "common"]:
        return 0
    return 2            # stages, a study, the corpora's stages, the ledger


def _import_module_constants(path) -> list[str]:
    """Names passed as a constant string to ``importlib.import_module``."""
    return [node.args[0].value for name, node in calls(ast.parse(path.read_text()))
            if name == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)]


def resolve(name: str) -> str | None:
    """The deepest repository module ``name`` (or a prefix of it) names."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        mod = ".".join(parts[:k])
        if module_file(REPO, mod) is not None:
            return mod
    return None


@lru_cache(maxsize=1)
def graph() -> nx.DiGraph:
    g = nx.DiGraph()
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if "study_template" in path.parts:
                continue
            src = module_name(REPO, path)
            g.add_node(src)
            for name in (*_imports(REPO, path), *_import_module_constants(path)):
                if name.split(".")[0] not in PACKAGES:
                    continue
                dst = resolve(name)
                if dst and dst != src and not src.startswith(dst + "."):   # a module's own package runs first anyway
                    g.add_edge(src, dst)
    return g


def test_the_graph_sees_the_house():
    g = graph()
    assert g.number_of_nodes() > 400
    assert g.has_edge("stages.common.runtime.stage", "stages.common.seeding")
    assert g.has_edge("claimbench.cli", "stages.ledger.diff")           # lazy imports count
    assert floor("stages.common.io") < floor("stages.common.runtime.stage") < floor("stages.zipf_bigram.train") \
        < floor("flows.pipeline") < floor("claimbench.cli")


def test_no_import_points_up_a_floor():
    up = sorted(f"{a} (floor {floor(a)}) imports {b} (floor {floor(b)})"
                for a, b in graph().edges if floor(b) > floor(a))
    assert not up, "imports that point up a floor:\n" + "\n".join(up)


def test_no_module_imports_itself_back():
    cycles = sorted(" -> ".join(c + [c[0]]) for c in nx.simple_cycles(graph()))
    assert not cycles, "import circles:\n" + "\n".join(cycles[:20])


@pytest.mark.parametrize("importer,imported", [
    ("stages.common.io", "stages.common.runtime.params"),
    ("stages.common.runtime.stage", "stages.zipf_bigram.train"),
    ("stages.zipf_bigram.train", "flows.pipeline"),
    ("flows.plan", "claimbench.params_check"),
])
def test_an_upward_import_would_be_seen(importer, imported):
    assert floor(imported) > floor(importer)
