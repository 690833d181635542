"""Typed, validated parameters with profile selection.

The top-level ``params.yaml`` holds only ``common`` (profile, verdict seeds, device). Each study keeps
its own parameters beside its code, in ``stages/<study>/params.json`` (the shared corpora in
``stages/corpora/params.json``), under one key, the study's name, with its three
profiles::

    # params.yaml
    common: {profile: default, seeds: {smoke: [0, 1], default: [0, 1, 2, 3, 4], paper: [0, ..., 9]},
             device: auto}
    # stages/zipf_bigram/params.json
    {"zipf_bigram": {
      "smoke":   {"prepare": {...}, "train": {...}, "evaluate": {...}},
      "default": {...},
      "paper":   {...}}}

``dvc.yaml`` tracks ``common`` and ``<study>.${common.profile}.<step>`` in the study's file, so
DVC records exactly the values a stage used, ``dvc exp run -S common.profile=smoke`` switches
profile and ``dvc exp run -S 'stages/zipf_bigram/params.json:zipf_bigram.default.train.epsilon=0.002'``
changes one value. Small files in a format DVC parses fast matter: DVC parses a stage's params
files each time it checks the stage. One 50 KB YAML file for every stage made a no-op
``dvc repro`` take 11 s; per-study YAML files, 2.1 s; per-study JSON (DVC's YAML parser, ruamel,
reads these files ~100x slower than ``json``), the figure in the README. JSON holds no comments:
why a value was chosen is written in the study's README.

Every profile of a study is validated before any compute: a bad value anywhere stops the
stage with a message naming the file, the key, the value and what is allowed.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from stages.common.base import ParamsError, Strict  # noqa: F401 - re-exported: every study's params.py takes them from here

PROFILES = ("smoke", "default", "paper")
STUDY_PARAMS = "params.json"      # a study's params file, beside its code


VerdictSeed = Annotated[int, Field(ge=0)]
CALIBRATION_FROM = 1000     # calibration seeds are >= 1000 (VERDICTS.md), verdict seeds below
CALIBRATION_ENV = "CLAIMBENCH_CALIBRATION"


class VerdictSeeds(Strict):
    """The verdict seeds of each profile: every stage that draws anything runs each of them, and
    the ledger judges every claim over them (docs/VERDICTS.md, section 1). A seed >= 1000 is
    a calibration seed: refused here unless ``CLAIMBENCH_CALIBRATION=1`` (a scratch copy of the
    pipeline run on calibration seeds to choose a design or time a profile)."""

    smoke: list[VerdictSeed] = Field(min_length=1)
    default: list[VerdictSeed] = Field(min_length=1)
    paper: list[VerdictSeed] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> "VerdictSeeds":
        calibrating = os.environ.get(CALIBRATION_ENV) == "1"
        for prof in PROFILES:
            seeds = getattr(self, prof)
            if len(set(seeds)) != len(seeds):
                raise ValueError(f"{prof}: a seed is listed twice in {seeds}")
            high = [s for s in seeds if s >= CALIBRATION_FROM]
            if high and not calibrating:
                raise ValueError(f"{prof}: {high[0]} is a calibration seed (>= {CALIBRATION_FROM}); verdict "
                                 f"seeds are 0-{CALIBRATION_FROM - 1} (to run calibration seeds in a scratch "
                                 f"copy, set {CALIBRATION_ENV}=1)")
        return self


class CommonParams(Strict):
    profile: Literal["smoke", "default", "paper"] = Field(
        description="which size profile every study runs")
    seeds: VerdictSeeds = Field(description="the verdict seeds of each profile (0-999; "
                                            "calibration seeds are >= 1000)")
    device: Literal["auto", "cpu", "cuda"] = Field(
        description="auto = CUDA when present, else CPU")

    @property
    def verdict_seeds(self) -> list[int]:
        """The active profile's verdict seeds."""
        return list(getattr(self.seeds, self.profile))

    @property
    def seed(self) -> int:
        """The first verdict seed: what a study that has not moved onto the claims contract v2
        runs (its one seed; it was ``common.seed`` = 0 before seeds became an axis)."""
        return self.verdict_seeds[0]


M = TypeVar("M", bound=BaseModel)


def repo_root() -> Path:
    """The repository root: ``$DVC_ROOT`` when DVC runs us, else the nearest folder with dvc.yaml."""
    if os.environ.get("DVC_ROOT"):
        return Path(os.environ["DVC_ROOT"])
    here = Path.cwd().resolve()
    for cand in (here, *here.parents):
        if (cand / "dvc.yaml").exists():
            return cand
    return here


def yaml_error_message(path: Path, err: Exception) -> str:
    """A YAML parse error as one line a person acts on: the file, the line and column, what the
    parser expected, and how to get the committed file back. (stages.common.claims words the
    claims files' errors the same way; the runtime keeps its own so that it imports nothing that
    would become every stage's DVC dep.)"""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    rel = os.path.relpath(path)
    shown = str(path) if rel.startswith("..") else rel
    at = "" if mark is None else f" (line {mark.line + 1}, column {mark.column + 1})"
    return f"{shown}: not valid YAML{at}: {problem}. Fix that line, or restore the committed file with `git checkout -- {shown}`"


def load_yaml(path: Path) -> Any:
    """Parse one YAML file (libyaml's C loader where PyYAML has it: ~6x faster)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path) as fh:
        try:
            return yaml.load(fh, Loader=loader)
        except yaml.YAMLError as err:
            raise ParamsError(yaml_error_message(path, err)) from None


def round_trip_yaml():
    """ruamel's round-trip YAML, laid out as this repository's YAML files are (comments, quotes,
    order and layout kept: loading and dumping any of its dvc.yaml files gives it back byte for
    byte). Every edit of a YAML file goes through it, never through text substitution."""
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def dump_yaml(data: Any) -> str:
    """``data`` (loaded with :func:`round_trip_yaml`) as text."""
    import io

    out = io.StringIO()
    round_trip_yaml().dump(data, out)
    return out.getvalue()


def set_profile(params_yaml: Path, profile: str) -> None:
    """Set ``common.profile`` in a params.yaml, keeping everything else as it is."""
    data = round_trip_yaml().load(params_yaml.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("common"), dict) or "profile" not in data["common"]:
        raise ValueError(f"{params_yaml}: no common.profile to set")
    data["common"]["profile"] = profile
    params_yaml.write_text(dump_yaml(data))


def read_params_file(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """One params file as a mapping (the top-level ``params.yaml`` by default; ``.json`` files
    are read as JSON, anything else as YAML)."""
    path = Path(path) if path else repo_root() / "params.yaml"
    if not path.exists():
        raise ParamsError(f"{path}: params file not found")
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise ParamsError(f"{path}: not valid JSON: {err}") from None
    else:
        data = load_yaml(path) or {}
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: top level must be a mapping of sections")
    return data


def dump_params(data: Any, indent: int = 0, width: int = 100, lead: int = 0) -> str:
    """``data`` as JSON for a params file a person reads and edits: one key a line, but a list
    or mapping that fits on its line stays on it (``"alphas": [0.5, 1.0, 2.0]``). ``lead`` is
    how many characters already stand on the line before the value."""
    flat = json.dumps(data)
    if not isinstance(data, (dict, list)) or not data or lead + len(flat) <= width:
        return flat
    pad = " " * (indent + 2)
    if isinstance(data, dict):
        items = []
        for k, v in data.items():
            head = f"{pad}{json.dumps(k)}: "
            items.append(head + dump_params(v, indent + 2, width, len(head)))
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + dump_params(v, indent + 2, width, len(pad)) for v in data]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def write_params_file(path: str | os.PathLike, data: dict[str, Any]) -> None:
    """Write a params file: JSON (:func:`dump_params`) for ``.json``, else YAML."""
    path = Path(path)
    if path.suffix == ".json":
        path.write_text(dump_params(data) + "\n")
    else:
        path.write_text(yaml.safe_dump(data, sort_keys=False))


def params_file(study: str, root: Path | None = None) -> Path:
    """Where ``study``'s parameters live: ``stages/<study>/params.json`` (the shared corpora's
    data stages too, ``stages/corpora/params.json``)."""
    return (root or repo_root()) / "stages" / study / STUDY_PARAMS


def file_label(section: str) -> str:
    """The params file a section lives in, as a user would name it (for messages)."""
    if section == "common":
        return "params.yaml"
    root = repo_root()
    path = params_file(section, root)
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def study_params_files(root: Path | None = None) -> dict[str, Path]:
    """Every study's params file, by study name (the corpora included)."""
    root = root or repo_root()
    return {p.parent.name: p for p in sorted(root.glob(f"stages/*/{STUDY_PARAMS}"))}


def read_study_file(study: str, root: Path | None = None) -> dict[str, Any]:
    """``{study: {smoke: ..., default: ..., paper: ...}}`` from the study's own params file."""
    path = params_file(study, root)
    if not path.exists():
        raise ParamsError(f"{path.relative_to(root or repo_root())}: params file of study {study!r} "
                          f"not found (`claimbench new-study {study}` writes one)")
    data = read_params_file(path)
    extra = sorted(set(data) - {study})
    if extra or study not in data:
        raise ParamsError(f"{path}: must hold exactly one top-level key, {study!r} (found "
                          f"{', '.join(map(repr, data)) or 'none'})")
    return data


def read_params(root: Path | None = None, studies: list[str] | None = None) -> dict[str, Any]:
    """``common`` and the sections of ``studies`` (every study when None), as one mapping
    ``{"common": ..., "<study>": ...}``: the shape every loader below takes."""
    root = root or repo_root()
    data = dict(read_params_file(root / "params.yaml"))
    for study in (studies if studies is not None else study_params_files(root)):
        data.update(read_study_file(study, root))
    return data


def _describe_constraint(meta: Any) -> str:
    import annotated_types as at

    table = [(at.Gt, "gt", "> {}"), (at.Ge, "ge", ">= {}"), (at.Lt, "lt", "< {}"),
             (at.Le, "le", "<= {}"), (at.MinLen, "min_length", "at least {} items"),
             (at.MaxLen, "max_length", "at most {} items")]
    for cls, attr, fmt in table:
        if isinstance(meta, cls):
            return fmt.format(getattr(meta, attr))
    return str(meta)


def _describe_type(ann: Any) -> str:
    """'list[float >= 0]', 'Literal['a', 'b']', 'int' ... for error messages."""
    import typing

    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Annotated:
        base, *metas = args
        cons = []
        for m in metas:
            cons.extend(getattr(m, "metadata", [m]))
        return " ".join([_describe_type(base), *(_describe_constraint(c) for c in cons)])
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(_describe_type(a) for a in args)}]"
    return getattr(ann, "__name__", str(ann))


def _allowed(model: type[BaseModel], loc: tuple) -> str:
    """Describe what a field at ``loc`` (inside ``model``) allows, for error messages."""
    cur: Any = model
    field = None
    for part in loc:
        if isinstance(part, int) or not (isinstance(cur, type) and issubclass(cur, BaseModel)):
            continue
        if part not in cur.model_fields:
            return "allowed keys: " + ", ".join(cur.model_fields)
        field = cur.model_fields[part]
        cur = field.annotation
    if field is None:
        return ""
    parts = [_describe_type(field.annotation)]
    parts += [_describe_constraint(m) for m in field.metadata]
    if field.description:
        parts.append(f"({field.description})")
    return " ".join(parts)


def _format(prefix: str, model: type[BaseModel], err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        loc = tuple(e["loc"])
        key = prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
        if e["type"] == "extra_forbidden":
            lines.append(f"  {key}: unknown key (value {e['input']!r}); "
                         f"{_allowed(model, loc)}")
        elif e["type"] == "missing":
            lines.append(f"  {key}: missing; {_allowed(model, loc)}")
        else:
            lines.append(f"  {key} = {e['input']!r}: {e['msg']}; allowed: {_allowed(model, loc)}")
    return f"invalid parameters in {file_label(prefix.split('.')[0])}:\n" + "\n".join(lines)


def validate(prefix: str, model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ParamsError(_format(prefix, model, err)) from None


def load_common(data: dict[str, Any] | None = None) -> CommonParams:
    data = read_params_file() if data is None else data
    if "common" not in data:
        raise ParamsError("params.yaml: missing section 'common' (profile, seeds, device)")
    return validate("common", CommonParams, data["common"])


def load_study(study: str, model: type[M], data: dict[str, Any] | None = None,
               profile: str | None = None) -> tuple[CommonParams, M]:
    """Validate ``common`` and all three profiles of ``study``; return the active profile's params."""
    data = read_params(studies=[study]) if data is None else data
    common = load_common(data)
    section = data.get(study)
    if not isinstance(section, dict):
        raise ParamsError(f"{file_label(study)}: missing section {study!r} (with profiles "
                          f"{', '.join(PROFILES)})")
    unknown = sorted(set(section) - set(PROFILES))
    if unknown:
        raise ParamsError(f"invalid parameters in {file_label(study)}:\n  {study}.{unknown[0]}: unknown profile; "
                          f"allowed: {', '.join(PROFILES)}")
    validated = {}
    for prof in PROFILES:
        if prof not in section:
            raise ParamsError(f"{file_label(study)}: {study}.{prof}: missing profile (every study defines "
                              f"{', '.join(PROFILES)})")
        validated[prof] = validate(f"{study}.{prof}", model, section[prof])
    return common, validated[profile or common.profile]


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Flatten nested dicts/models to ``a.b.c`` keys (lists kept as values)."""
    if isinstance(obj, BaseModel):
        obj = obj.model_dump()
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}{k}."))
        return out
    out[prefix[:-1]] = obj
    return out
