"""Deps that say what shapes a result: every stage's deps in dvc.yaml cover every repository module
it imports (directly, through its study or through common) and name no infrastructure; the
import graph itself is checked on a small tree by hand."""
from __future__ import annotations

import textwrap

import ast

import pytest

from claimbench.depgraph import (INFRASTRUCTURE, check_stage, code_deps, holds_code, infrastructure_files,
                                 is_infrastructure, module_file, planned_deps, rewrite_deps, stage_module)
from stages.common.runtime.dvcfile import load_stages

from tests.helpers import REPO, calls

STAGES = load_stages(REPO)


@pytest.mark.parametrize("name", [n for n, s in STAGES.items() if stage_module(s.cmd)])
def test_deps_cover_every_imported_module_and_no_infrastructure(name):
    s = STAGES[name]
    missing, infra, stale = check_stage(REPO, s.deps, stage_module(s.cmd), s.meta.get("runs", []))
    assert not missing, (f"stage {name} imports {missing} but its deps in dvc.yaml do not name them: "
                         f"add them (`claimbench deps --write {name}` does)")
    assert not infra, (f"stage {name}'s deps name infrastructure {infra}: an edit to it would re-run the "
                       f"stage though it cannot change its outputs (runtime and tools are never deps: depgraph.INFRASTRUCTURE)")
    assert not stale, (f"stage {name}'s deps name code it neither imports nor runs: {stale} (a file it runs "
                       f"without importing it goes in its `meta: {{runs: [...]}}`)")


def test_every_dep_exists():
    for name, s in STAGES.items():
        for d in s.deps:
            made = any(d == o or d.startswith(o + "/") or o.startswith(d + "/") for t in STAGES.values() for o in t.outs)
            assert made or (REPO / d).exists(), f"stage {name}: dep {d} neither exists nor is made by a stage"


def test_infrastructure_is_the_runtime_and_tools_folders():
    for folder in INFRASTRUCTURE:
        assert (REPO / folder).is_dir(), folder
    files = infrastructure_files(REPO)
    assert "stages/common/runtime/stage.py" in files and "claimbench/cli.py" in files
    assert not any(f.startswith("stages/common/") and not f.startswith("stages/common/runtime/") for f in files)
    assert is_infrastructure("stages/common/runtime/tracking.py") and not is_infrastructure("stages/common/io.py")


def test_no_stage_depends_on_the_runtime_or_tools_but_its_own_module():
    """The params stage's own module is a tool (claimbench/params_check.py) and its dep; the
    runtime it imports (params validation) is not."""
    params = STAGES["params"]
    assert "claimbench/params_check.py" in params.deps
    for name, s in STAGES.items():
        own = stage_module(s.cmd)
        own_file = own and own.replace(".", "/") + ".py"
        assert not [d for d in s.deps if is_infrastructure(d) and d != own_file], name


def test_the_ledger_depends_on_every_study():
    ledger = STAGES["ledger"].deps
    studies = sorted(p.parent.name for p in (REPO / "stages").glob("*/claims.yaml"))
    assert len(studies) >= 15
    for study in studies:
        assert f"stages/{study}/claims.yaml" in ledger and f"reports/{study}" in ledger, study


def test_every_stage_lies_downstream_of_the_params_check():
    """DVC removes a stage's outs before it runs; the params stage must run before any of them."""
    from stages.common.runtime.dvcfile import upstream
    from claimbench.depgraph import stage_deps
    from claimbench.params_check import MARKER, STAGE

    edges = upstream(STAGES)
    for name in STAGES:
        if name == STAGE:
            continue
        if not edges[name]:
            raise AssertionError(f"{name} has no upstream stage: add {MARKER} to its deps")
    assert set(stage_deps(REPO)) == set(STAGES[STAGE].deps)
    params_files = {p.relative_to(REPO).as_posix() for p in REPO.glob("stages/**/params.json")}
    assert params_files <= set(STAGES[STAGE].deps) and len(params_files) >= 15


@pytest.fixture
def tree(tmp_path):
    """stages/{common/{io,tracking,seeding}, s/{__init__ (docstring only), train, model, util}}."""
    files = {
        "stages/__init__.py": "",
        "stages/common/__init__.py": '"""common"""\n',
        "stages/common/io.py": "import json\n",
        "stages/common/seeding.py": "import random\n",
        "stages/common/runtime/stage.py": "from stages.common.seeding import seed_everything\nfrom . import tracking\n",
        "stages/common/runtime/tracking.py": "from stages.common.io import x\n",
        "stages/s/__init__.py": '"""the study"""\nfrom __future__ import annotations\n',
        "stages/s/train.py": textwrap.dedent("""\
            from stages.common.runtime.stage import stage
            from . import model
            def main():
                from .util import helper          # a lazy import counts
                import numpy
            """),
        "stages/s/model.py": "from ..common import io\n",
        "stages/s/util.py": "X = 1\n",
        "stages/s/unused.py": "raise SystemExit\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_code_deps_by_hand(tree):
    # stage.py and tracking.py are runtime: not deps, but what they import (seeding, io) is
    assert code_deps(tree, "stages.s.train") == ["stages/common/io.py", "stages/common/seeding.py",
                                                 "stages/s/model.py", "stages/s/train.py", "stages/s/util.py"]
    assert not holds_code(tree / "stages/s/__init__.py") and holds_code(tree / "stages/s/util.py")
    (tree / "stages/s/__init__.py").write_text("CONSTANT = 3\n")       # now it runs code: a dep
    assert "stages/s/__init__.py" in code_deps(tree, "stages.s.train")


def test_check_and_planned_deps(tree):
    missing, infra, stale = check_stage(tree, ["stages/common", "stages/s/train.py", "stages/s/unused.py"],
                                        "stages.s.train")
    assert missing == ["stages/s/model.py", "stages/s/util.py"]
    assert infra == ["stages/common/runtime/stage.py", "stages/common/runtime/tracking.py"]
    assert stale == ["stages/common", "stages/s/unused.py"]
    new = planned_deps(tree, ["stages/s/unused.py", "stages/common", "data/s/x"], "stages.s.train")
    assert new == ["stages/common/io.py", "stages/common/seeding.py", "stages/s/model.py", "stages/s/train.py",
                   "stages/s/util.py", "data/s/x"]
    # a file the stage runs without importing it (meta.runs) counts, with what it imports
    (tree / "stages/s/worker.py").write_text("from . import model\n")
    runs = ["stages/s/worker.py"]
    assert "stages/s/worker.py" in planned_deps(tree, [], "stages.s.train", runs)
    assert check_stage(tree, planned_deps(tree, [], "stages.s.train", runs), "stages.s.train", runs) == ([], [], [])
    with pytest.raises(FileNotFoundError, match="meta.runs names stages/s/nope.py"):
        code_deps(tree, "stages.s.train", ["stages/s/nope.py"])


def test_rewrite_deps_touches_only_that_stage():
    text = ("stages:\n  a:\n    cmd: x\n    deps:\n      - old\n      - data/a\n    outs:\n      - o\n"
            "  b:\n    cmd: y\n    deps:\n      - keep\n")
    out = rewrite_deps(text, "a", ["n1", "n2"])
    assert out == ("stages:\n  a:\n    cmd: x\n    deps:\n      - n1\n      - n2\n    outs:\n      - o\n"
                   "  b:\n    cmd: y\n    deps:\n      - keep\n")
    with pytest.raises(KeyError, match="no stage 'c'"):
        rewrite_deps(text, "c", [])


def test_stage_module_reads_the_cmd():
    assert stage_module("python -m stages.corpora attributes") == "stages.corpora"
    assert stage_module("python -m claimbench.params_check") == "claimbench.params_check"
    assert stage_module("python -m elsewhere.module") is None
    assert stage_module("python toy.py x") is None


def test_keep_studies_cuts_the_dag_down_and_keeps_its_layout(tmp_path):
    import shutil

    from stages.common.runtime.checkout import keep_studies

    for f in ("dvc.yaml", "params.yaml"):
        shutil.copy(REPO / f, tmp_path / f)
    shutil.copytree(REPO / "stages", tmp_path / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    keep_studies(tmp_path, ["zipf_bigram"])
    stages = load_stages(tmp_path)
    assert sorted(stages) == ["ledger", "params", "zipf_bigram-evaluate", "zipf_bigram-prepare", "zipf_bigram-train"]
    assert stages["zipf_bigram-train"].address == "stages/zipf_bigram/dvc.yaml:zipf_bigram-train"
    assert stages["ledger"].address == "ledger"
    ledger = stages["ledger"].deps
    assert "reports/zipf_bigram" in ledger and not any("nac_b" in d for d in ledger)
    assert stages["ledger"].outs[:3] == ["reports/claims.json", "reports/claims.md", "reports/index.html"]
    assert (tmp_path / "stages/nac_b/claims.yaml").exists() and not (tmp_path / "stages/nac_b/dvc.yaml").exists()
    with pytest.raises(ValueError, match="no stages of nope"):
        keep_studies(tmp_path, ["nope"])


def test_deps_write_rewrites_a_matrix_stage_once_under_its_dvc_yaml_key(tmp_path, stage_env, python_exe):
    """escort_belief-train is a matrix stage (@0, @1): `claimbench deps --write` of both members
    writes the one entry in dvc.yaml once, with the dep that was missing, and changes nothing else."""
    import subprocess

    from tests.helpers import code_copy

    root = code_copy(tmp_path)
    dvc_yaml = root / "stages/escort_belief/dvc.yaml"
    committed = dvc_yaml.read_text()
    dropped = "      - stages/escort_belief/stein.py\n      - stages/escort_belief/train.py\n"
    assert dropped in committed
    dvc_yaml.write_text(committed.replace(dropped, "      - stages/escort_belief/train.py\n", 1))
    cli = [python_exe, "-m", "claimbench.cli", "deps"]
    res = subprocess.run([*cli, "--write", "escort_belief-train@0", "escort_belief-train@1"], cwd=root,
                         env=stage_env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.count("deps rewritten") == 1, res.stdout + res.stderr
    assert dvc_yaml.read_text() == committed


def _called(tree) -> set[str]:
    return {name for name, _ in calls(tree)}


@pytest.mark.parametrize("name", [n for n, s in STAGES.items() if stage_module(s.cmd)])
def test_a_stage_that_saves_a_pyfunc_model_depends_on_its_code_file(name):
    """save_pyfunc copies MLflow's models-from-code file into the stage's out, which the import
    graph cannot see: a stage whose module calls it (or calls a function of its study that does)
    names the file in its ``meta: {runs: [...]}`` in dvc.yaml, hence among its deps."""
    s = STAGES[name]
    module = stage_module(s.cmd)
    savers = {"save_pyfunc"}
    for rel in code_deps(REPO, module, (s.meta or {}).get("runs", [])):
        if rel.endswith(".py") and not rel.startswith("stages/common/"):
            for f in ast.walk(ast.parse((REPO / rel).read_text())):
                if isinstance(f, ast.FunctionDef) and "save_pyfunc" in _called(f):
                    savers.add(f.name)
    own = module_file(REPO, module)
    if _called(ast.parse(own.read_text())) & savers:
        assert any(d.endswith("pyfunc.py") for d in s.deps), (
            f"stage {name} saves a pyfunc model but no pyfunc.py is among its deps: name it in the "
            f"stage's `meta: {{runs: [...]}}` in dvc.yaml")


def test_the_pyfunc_check_sees_a_saving_stage():
    assert "stages/noisy_grpo/pyfunc.py" in STAGES["noisy_grpo-train"].deps
    assert "save_pyfunc" in _called(ast.parse((REPO / "stages/noisy_grpo/train.py").read_text()))
