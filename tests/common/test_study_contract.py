"""The study contract, one test over every study (a new study is covered by being there):

* every profile of its params file validates against its params model (``PARAMS``);
* an unknown key is refused, naming the key and the allowed ones;
* a value its model bounds, set out of bounds, stops its first stage with exit 2 before any compute,
  the message naming the key and the value;
* a stage run without an input another stage makes exits 2 naming that stage and the command
  (the stage wrapper reads the producer from dvc.yaml).

The bad value and the stage without input are found from the study's params model and its
dvc.yaml, not listed by hand. A study's own params tests (cross-field rules, its messages) stay in
``tests/<study>/``.
"""
from __future__ import annotations

import copy
import importlib
from pathlib import Path

import pytest

from claimbench.depgraph import stage_module
from stages.common.runtime.dvcfile import covered, load_stages, upstream
from stages.common.runtime.params import PROFILES, load_study, read_params, study_params_files
from claimbench.params_check import params_module

from tests.helpers import params_error, stops_before_compute, stops_without_input

REPO = Path(__file__).resolve().parents[2]
FILES = study_params_files(REPO)
STUDIES = sorted(FILES)
STAGES = load_stages(REPO)


def model_of(study: str):
    return getattr(importlib.import_module(params_module(REPO, study, FILES[study])), "PARAMS")


def study_stages(study: str) -> list:
    """The study's stages in dvc.yaml order."""
    return [s for s in STAGES.values() if s.name.split("-")[0] == study]


def invocation(stage) -> str:
    """``module args`` of a stage's ``python -m`` command."""
    return stage.cmd.split(" -m ", 1)[1].split("&&")[0].strip()


def bounded_value(study: str, section: dict) -> tuple[str, object]:
    """A (dotted key under the smoke profile, out-of-bounds value) from the study's params model:
    the first number field with a bound in its JSON schema (or string with a least length) whose
    section the smoke profile has."""
    model = model_of(study)
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})

    def resolve(node: dict) -> dict:
        while "$ref" in node:
            node = defs[node["$ref"].split("/")[-1]]
        for key in ("anyOf", "allOf"):
            for sub in node.get(key, []):
                if "$ref" in sub or "properties" in sub:
                    return resolve(sub)
        return node

    def walk(node: dict, path: list[str], values: dict):
        node = resolve(node)
        for name, prop in (node.get("properties") or {}).items():
            if name not in values:
                continue
            sub = resolve(prop)
            if "properties" in sub and isinstance(values[name], dict):
                found = walk(prop, [*path, name], values[name])
                if found:
                    return found
                continue
            if sub.get("type") == "string" and sub.get("minLength", 0) >= 1:
                return [*path, name], ""
            if sub.get("type") not in ("integer", "number") or isinstance(values[name], bool):
                continue
            if "minimum" in sub:
                return [*path, name], sub["minimum"] - 1
            if "exclusiveMinimum" in sub:
                return [*path, name], sub["exclusiveMinimum"] - 1
            if "maximum" in sub:
                return [*path, name], sub["maximum"] + 1
            if "exclusiveMaximum" in sub:
                return [*path, name], sub["exclusiveMaximum"] + 1
        return None

    for step, values in section.items():
        if not isinstance(values, dict):
            continue
        step_schema = (schema.get("properties") or {}).get(step)
        if step_schema is None:
            continue
        found = walk(step_schema, [step], values)
        if found:
            path, value = found
            return ".".join(path), value
    raise AssertionError(f"{study}: no bounded number field in its params model")


def without_input(study: str):
    """(a stage of the study that reads an out another stage makes, that producer), first in
    dvc.yaml order; None when every stage of the study reads only code and shipped files."""
    edges = upstream(STAGES)
    for s in study_stages(study):
        producers = [STAGES[p] for p in edges[s.name] if not STAGES[p].meta.get("gate")]
        for dep in s.deps:
            for p in producers:
                if covered(dep, p.outs):
                    return s, p
    return None


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("study", STUDIES)
def test_every_profile_validates(study, profile):
    data = read_params(REPO, studies=[study])
    _, p = load_study(study, model_of(study), data, profile=profile)
    dumped = p.model_dump()
    assert set(data[study][profile]) <= set(dumped), f"{study}.{profile}: sections the model drops"


@pytest.mark.parametrize("study", STUDIES)
def test_an_unknown_key_is_refused_naming_the_allowed(study):
    data = copy.deepcopy(read_params(REPO, studies=[study]))
    step, values = next((k, v) for k, v in data[study]["default"].items() if isinstance(v, dict))
    allowed = sorted(values)
    values["no_such_key"] = 1
    msg = params_error(study, model_of(study), data)
    assert f"{study}.default.{step}.no_such_key: unknown key" in msg, msg
    assert any(k in msg for k in allowed), msg


@pytest.mark.parametrize("study", STUDIES)
def test_a_bad_value_stops_the_first_stage_before_compute(study, tmp_path, stage_env, python_exe):
    key, value = bounded_value(study, read_params(REPO, studies=[study])[study]["smoke"])
    first = study_stages(study)[0]
    assert stage_module(first.cmd), first.cmd
    err = stops_before_compute(tmp_path, invocation(first), {f"{study}.smoke.{key}": value}, stage_env, python_exe)
    assert f"{study}.smoke.{key} = {value!r}" in err, err


@pytest.mark.parametrize("study", STUDIES)
def test_a_stage_without_its_input_names_the_stage_that_makes_it(study, tmp_path, stage_env, python_exe):
    found = without_input(study)
    if found is None:
        pytest.skip(f"{study}: no stage reads another stage's out")
    stage, producer = found
    stops_without_input(tmp_path, invocation(stage), f"dvc repro {producer.address}", stage_env, python_exe)
