"""The DAG's files agree with each other: every dvc.lock holds exactly the stages its dvc.yaml
defines (a stale entry was once taken as a file's producer and stopped a fresh clone's
``dvc repro``), and every out is made by exactly one stage."""
from __future__ import annotations

from pathlib import Path

import pytest

from stages.common.dvcfile import load_stages, pipeline_files
from stages.common.params import load_yaml

REPO = Path(__file__).resolve().parents[2]
FILES = [p.relative_to(REPO).as_posix() for p in pipeline_files(REPO)]


@pytest.mark.parametrize("dvc_yaml", FILES)
def test_lock_holds_exactly_the_stages_its_dvc_yaml_defines(dvc_yaml):
    defined = set((load_yaml(REPO / dvc_yaml) or {}).get("stages") or {})
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
