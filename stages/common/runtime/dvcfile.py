"""Read-only access to the pipeline's dvc.yaml files and their dvc.lock files (the DAG).

The DAG is DVC's, in several files: ``dvc.yaml`` at the root (the ledger, which depends on every
study) and one ``dvc.yaml`` per study beside its code (``stages/<study>/dvc.yaml``; the shared
corpora in ``stages/corpora/dvc.yaml``), each with its own ``dvc.lock``. DVC builds one
graph from all of them; ``dvc repro`` at the root runs the ledger and everything upstream of it.
One lock file per study keeps DVC's rewrite of a lock after each stage small: with one
pipeline-wide dvc.lock of 125 KB that rewrite took 0.8 s a stage, and it grows with the number of
studies. A study's stages run from the repository root (``wdir``), so every path in every file is
relative to the root, and stage names are unique across files (``<study>-<step>``); DVC addresses
a stage in a study's file as ``stages/<study>/dvc.yaml:<name>`` (:attr:`Stage.address`).

Parsing is plain YAML plus DVC's ``${...}`` interpolation from params.yaml, so stages,
the ledger and the Prefect flow can read the DAG without importing DVC (which holds the
repository lock while it runs).

A ``matrix:`` stage is expanded as DVC expands it (:func:`expand_matrix`): one stage per
combination of the matrix's values, named ``<name>@<values joined by '-'>``, with ``${item.<key>}``
interpolated. The pipeline uses it to split a study's verdict seeds into shards
(``matrix: {shard: [0, 1]}``; stages/common/seeds.py ``shard_seeds``): the shards are separate
processes that the Prefect flow runs side by side.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stages.common.runtime.params import load_yaml, read_params_file, repo_root

_INTERP = re.compile(r"\$\{\s*([A-Za-z0-9_.\-]+)\s*\}")

# the stage that validates every study's params before any stage runs (claimbench/params_check.py):
# upstream of every stage, a gate (`meta: {gate: true}`), it belongs to no study and logs no run
PARAMS_STAGE = "params"


def _lookup(params: dict[str, Any], dotted: str) -> Any:
    cur: Any = params
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            raise KeyError(f"dvc.yaml interpolates ${{{dotted}}} but params.yaml has no such key")
        cur = cur[part]
    return cur


def interpolate(value: Any, params: dict[str, Any]) -> Any:
    """DVC's interpolation: ``${a.b}`` inside a string is replaced by the value's text; a string
    that is one ``${a.b}`` and nothing else becomes the value itself (a list for ``matrix:``)."""
    if isinstance(value, str):
        whole = _INTERP.fullmatch(value)
        if whole:
            return _lookup(params, whole.group(1))
        return _INTERP.sub(lambda m: str(_lookup(params, m.group(1))), value)
    if isinstance(value, list):
        return [interpolate(v, params) for v in value]
    if isinstance(value, dict):
        return {interpolate(k, params): interpolate(v, params) for k, v in value.items()}
    return value


def expand_matrix(name: str, matrix: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The stages DVC generates from ``matrix:``, in its order: ``(name@suffix, item)`` for every
    combination of the keys' values (the first key varies slowest). A scalar value names itself in
    the suffix; a list or dict value is named by its key and index (``key0``), as in DVC."""
    if not isinstance(matrix, dict) or not matrix:
        raise ValueError(f"stage {name!r}: `matrix:` must map each key to a list of values")
    for key, values in matrix.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"stage {name!r}: matrix key {key!r} must be a non-empty list, got {values!r}")
    out = []
    keys = list(matrix)
    for combo in itertools.product(*(list(enumerate(matrix[k])) for k in keys)):
        parts = [f"{k}{i}" if isinstance(v, (list, dict)) else
                 (str(v).lower() if isinstance(v, bool) else str(v))
                 for k, (i, v) in zip(keys, combo)]
        out.append((f"{name}@{'-'.join(parts)}", {k: v for k, (_, v) in zip(keys, combo)}))
    return out


def covered(path: str, folders: list[str]) -> bool:
    """True when ``path`` is one of ``folders`` (deps, outs: paths relative to the root) or inside
    one of them."""
    return any(path == d.rstrip("/") or path.startswith(d.rstrip("/") + "/") for d in folders)


def _paths(entries: list[Any] | None) -> list[str]:
    out = []
    for e in entries or []:
        out.append(next(iter(e)) if isinstance(e, dict) else str(e))
    return out


@dataclass(frozen=True)
class Stage:
    name: str
    cmd: str
    deps: list[str]
    outs: list[str]          # outs + metrics + plots files that the stage writes
    metrics: list[str]
    plots: list[str]
    params: list[str]
    gpu: bool = False        # `meta: {gpu: true}` in dvc.yaml
    meta: dict[str, Any] = field(default_factory=dict)
    file: str = "dvc.yaml"   # the dvc.yaml that defines it, relative to the root
    group: str | None = None  # a matrix stage's key in dvc.yaml (its name without ``@...``)
    item: dict[str, Any] = field(default_factory=dict)   # a matrix stage's ``${item}``

    @property
    def address(self) -> str:
        """How DVC names it on its command line: ``name`` at the root, ``file:name`` elsewhere."""
        return self.name if self.file == "dvc.yaml" else f"{self.file}:{self.name}"


def pipeline_files(root: Path | None = None) -> list[Path]:
    """Every dvc.yaml of the pipeline: the root's, then each study's and the corpora's (sorted)."""
    root = root or repo_root()
    nested = sorted(root.glob("stages/*/dvc.yaml"))
    return [p for p in [root / "dvc.yaml", *nested] if p.is_file()]


def load_stages(root: Path | None = None) -> dict[str, Stage]:
    root = root or repo_root()
    params = read_params_file(root / "params.yaml")     # `${common.profile}` comes from here
    stages: dict[str, Stage] = {}
    for path in pipeline_files(root):
        raw = load_yaml(path) or {}
        rel = path.relative_to(root).as_posix()
        for key, template in (raw.get("stages") or {}).items():
            wdir = (path.parent / template.get("wdir", ".")).resolve()
            if wdir != root.resolve():
                raise ValueError(f"{rel}: stage {key!r} must run from the repository root "
                                 f"(wdir: {Path(*['..'] * (len(path.parent.relative_to(root).parts)))})")
            if "foreach" in template:
                raise ValueError(f"{rel}: stage {key!r} uses `foreach:`; the pipeline reads `matrix:` only")
            members = ([(key, None)] if "matrix" not in template else
                       expand_matrix(key, interpolate(template["matrix"], params)))
            for name, item in members:
                if name in stages:
                    raise ValueError(f"stage {name!r} is defined in {stages[name].file} and in {rel}")
                spec = {k: v for k, v in template.items() if k != "matrix"}
                spec = interpolate(spec, {**params, "item": item} if item is not None else params)
                stages[name] = _stage(name, spec, rel, key if item is not None else None, item or {})
    return stages


def _stage(name: str, spec: dict[str, Any], rel: str, group: str | None, item: dict[str, Any]) -> Stage:
    metrics = _paths(spec.get("metrics"))
    plots = _paths(spec.get("plots"))
    outs = _paths(spec.get("outs"))
    params_keys: list[str] = []
    for p in spec.get("params") or []:      # `key`, or `{file: [key, ...]}` for another file
        if isinstance(p, dict):
            params_keys.extend(f"{f}:{k}" for f, keys in p.items() for k in (keys or []))
        else:
            params_keys.append(str(p))
    cmd = spec["cmd"] if isinstance(spec["cmd"], str) else " && ".join(spec["cmd"])
    meta = spec.get("meta") or {}
    return Stage(name=name, cmd=cmd, deps=_paths(spec.get("deps")),
                 outs=outs + [m for m in metrics if m not in outs] + [p for p in plots if p not in outs],
                 metrics=metrics, plots=plots, params=params_keys,
                 gpu=bool(meta.get("gpu", False)), meta=meta, file=rel, group=group, item=item)


def load_lock(root: Path | None = None) -> dict[str, Any]:
    """Every stage's entry in the pipeline's dvc.lock files (the root's and each study's), by stage
    name; each entry also says how DVC addresses that stage (``_address``)."""
    root = root or repo_root()
    entries: dict[str, Any] = {}
    locks = [root / "dvc.lock", *sorted(root.glob("stages/*/dvc.lock"))]
    for lock in locks:
        if not lock.is_file():
            continue
        rel = lock.parent.relative_to(root).as_posix()
        for name, entry in ((load_yaml(lock) or {}).get("stages") or {}).items():
            entries[name] = {**entry, "_address": name if rel == "." else f"{rel}/dvc.yaml:{name}"}
    return entries


def upstream(stages: dict[str, Stage]) -> dict[str, set[str]]:
    """For each stage, the stages whose outs it depends on (DVC's edges)."""
    producers: dict[str, str] = {}
    for s in stages.values():
        for o in s.outs:
            producers[Path(o).as_posix().rstrip("/")] = s.name
    edges: dict[str, set[str]] = {n: set() for n in stages}
    for s in stages.values():
        for d in s.deps:
            d = Path(d).as_posix().rstrip("/")
            for out, prod in producers.items():
                if prod != s.name and (d == out or d.startswith(out + "/") or out.startswith(d + "/")):
                    edges[s.name].add(prod)
    return edges
