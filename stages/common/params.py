"""Typed, validated parameters with profile selection.

``params.yaml`` holds a ``common`` section and one section per study, and each study
section holds the three profiles::

    common: {profile: default, seed: 0, device: auto}
    zipf_bigram:
      smoke:   {prepare: {...}, train: {...}, evaluate: {...}}
      default: {...}
      paper:   {...}

``dvc.yaml`` tracks ``<study>.${common.profile}.<step>``, so DVC records exactly the values
a stage used and ``dvc exp run -S common.profile=smoke`` switches profile. Every profile of
a study is validated before any compute: a bad value anywhere stops the stage with a
message naming the key, the value and what is allowed.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

PROFILES = ("smoke", "default", "paper")


class ParamsError(ValueError):
    """A parameter in params.yaml is missing, unknown or has a value that is not allowed."""


class Strict(BaseModel):
    """Base for every params model: unknown keys and silent coercions are errors."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class CommonParams(Strict):
    profile: Literal["smoke", "default", "paper"] = Field(
        description="which size profile every study runs")
    seed: int = Field(ge=0, description="base seed for every random source")
    device: Literal["auto", "cpu", "cuda"] = Field(
        description="auto = CUDA when present, else CPU")


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


def read_params_file(path: str | os.PathLike | None = None) -> dict[str, Any]:
    path = Path(path) if path else repo_root() / "params.yaml"
    if not path.exists():
        raise ParamsError(f"{path}: params file not found")
    with open(path) as fh:
        data = yaml.safe_load(fh) or {}
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: top level must be a mapping of sections")
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
    return "invalid parameters in params.yaml:\n" + "\n".join(lines)


def validate(prefix: str, model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ParamsError(_format(prefix, model, err)) from None


def load_common(data: dict[str, Any] | None = None) -> CommonParams:
    data = read_params_file() if data is None else data
    if "common" not in data:
        raise ParamsError("params.yaml: missing section 'common' (profile, seed, device)")
    return validate("common", CommonParams, data["common"])


def load_study(study: str, model: type[M], data: dict[str, Any] | None = None,
               profile: str | None = None) -> tuple[CommonParams, M]:
    """Validate ``common`` and all three profiles of ``study``; return the active profile's params."""
    data = read_params_file() if data is None else data
    common = load_common(data)
    section = data.get(study)
    if not isinstance(section, dict):
        raise ParamsError(f"params.yaml: missing section {study!r} (with profiles {', '.join(PROFILES)})")
    unknown = sorted(set(section) - set(PROFILES))
    if unknown:
        raise ParamsError(f"invalid parameters in params.yaml:\n  {study}.{unknown[0]}: unknown profile; "
                          f"allowed: {', '.join(PROFILES)}")
    validated = {}
    for prof in PROFILES:
        if prof not in section:
            raise ParamsError(f"params.yaml: {study}.{prof}: missing profile (every study defines "
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
