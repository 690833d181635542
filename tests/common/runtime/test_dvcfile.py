"""The DAG's files agree with each other: every dvc.lock holds exactly the stages its dvc.yaml
defines (a stale entry was once taken as a file's producer and stopped a fresh clone's
``dvc repro``), and every out is made by exactly one stage."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stages.common.runtime.dvcfile import load_stages, pipeline_files
from stages.common.runtime.params import load_yaml

REPO = Path(__file__).resolve().parents[3]
FILES = [p.relative_to(REPO).as_posix() for p in pipeline_files(REPO)]


@pytest.mark.parametrize("dvc_yaml", FILES)
def test_lock_holds_exactly_the_stages_its_dvc_yaml_defines(dvc_yaml):
    defined = {n for n, s in load_stages(REPO).items() if s.file == dvc_yaml}   # matrix stages expanded
    lock = (REPO / dvc_yaml).with_name("dvc.lock")
    assert lock.is_file(), f"{dvc_yaml} has no dvc.lock beside it: run its stages and commit the lock"
    locked = set((load_yaml(lock) or {}).get("stages") or {})
    assert locked - defined == set(), (
        f"{lock.relative_to(REPO)} has entries for stages {dvc_yaml} does not define: delete them")
    assert defined - locked == set(), (
        f"{dvc_yaml} defines stages its dvc.lock has never recorded: run `dvc repro {dvc_yaml}`")


@pytest.mark.parametrize("dvc_yaml", FILES)
def test_lock_records_the_outs_each_stage_declares(dvc_yaml):
    """A lock entry's outs are the stage's outs, metrics and plots files of today's dvc.yaml."""
    stages = {n: s for n, s in load_stages(REPO).items() if s.file == dvc_yaml}
    entries = (load_yaml((REPO / dvc_yaml).with_name("dvc.lock")) or {}).get("stages") or {}
    for name, spec in stages.items():
        recorded = {o["path"] for o in entries.get(name, {}).get("outs") or []}
        assert recorded == set(spec.outs), f"{name}: lock outs {sorted(recorded ^ set(spec.outs))} differ"


def test_every_out_is_made_by_exactly_one_stage():
    makers: dict[str, list[str]] = {}
    for stage in load_stages(REPO).values():
        for out in stage.outs:
            makers.setdefault(Path(out).as_posix().rstrip("/"), []).append(stage.name)
    twice = {o: m for o, m in makers.items() if len(m) > 1}
    assert twice == {}, f"outs made by more than one stage: {twice}"
    nested = [(a, b) for a in makers for b in makers if a != b and b.startswith(a + "/")]
    assert nested == [], f"an out inside another stage's out folder: {nested}"


# --------------------------------------------------------------------------------------
# matrix stages: expanded as DVC expands them
# --------------------------------------------------------------------------------------
MATRIX = {"shard": [0, 1], "opt": ["adam", "sgd"], "flag": [True, False], "cfg": [{"a": 1}, {"a": 2}],
          "pair": [[1, 2], [3, 4]]}


def test_matrix_names_are_dvcs(tmp_path):
    """The names expand_matrix gives are those DVC's own parser gives (`dvc stage list`), in order."""
    import subprocess
    import sys

    from stages.common.runtime.dvcfile import expand_matrix

    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    dvc = [sys.executable, "-m", "dvc"]
    subprocess.run([*dvc, "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"fit": {
        "matrix": MATRIX, "cmd": "echo ${item.shard} ${item.opt}", "outs": ["o-${item.shard}-${item.opt}"]}}}, sort_keys=False))
    listed = subprocess.run([*dvc, "stage", "list", "--name-only"], cwd=tmp_path, check=True,
                            capture_output=True, text=True).stdout.split()
    ours = [name for name, _ in expand_matrix("fit", MATRIX)]
    assert len(ours) == 32 and ours == listed


def test_load_stages_expands_a_matrix_with_item_interpolated(tmp_path):
    from stages.common.runtime.dvcfile import load_stages

    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"common": {"profile": "smoke", "shards": [0, 1, 2]}}))
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": {
        "s-train": {"matrix": {"shard": "${common.shards}"}, "cmd": "python -m stages.s.train --shard ${item.shard}",
                    "deps": ["data/s/${common.profile}.npz"], "outs": ["data/s/train/shard-${item.shard}"]},
        "s-evaluate": {"cmd": "python -m stages.s.evaluate", "deps": ["data/s/train"], "outs": ["r.json"]}}}, sort_keys=False))
    stages = load_stages(tmp_path)
    assert list(stages) == ["s-train@0", "s-train@1", "s-train@2", "s-evaluate"]
    one = stages["s-train@1"]
    assert (one.cmd, one.outs, one.deps, one.group, one.item) == (
        "python -m stages.s.train --shard 1", ["data/s/train/shard-1"], ["data/s/smoke.npz"], "s-train", {"shard": 1})
    assert stages["s-evaluate"].group is None
    from stages.common.runtime.dvcfile import upstream

    assert upstream(stages)["s-evaluate"] == {"s-train@0", "s-train@1", "s-train@2"}


@pytest.mark.parametrize("matrix, message", [
    ({}, "must map each key"), ({"shard": []}, "non-empty list"), ({"shard": 3}, "non-empty list")])
def test_a_bad_matrix_is_named(matrix, message):
    from stages.common.runtime.dvcfile import expand_matrix

    with pytest.raises(ValueError, match=message):
        expand_matrix("s-train", matrix)


def test_foreach_is_refused_with_its_name(tmp_path):
    from stages.common.runtime.dvcfile import load_stages

    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"common": {"profile": "smoke"}}))
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"s-x": {"foreach": [1, 2], "do": {"cmd": "x"}}}}))
    with pytest.raises(ValueError, match="s-x.*foreach"):
        load_stages(tmp_path)
