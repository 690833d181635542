"""Read-only access to dvc.yaml and dvc.lock (the one definition of the DAG).

Parsing is plain YAML plus DVC's ``${...}`` interpolation from params.yaml, so stages,
the ledger and the Prefect flow can read the DAG without importing DVC (which holds the
repository lock while it runs).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .params import read_params_file, repo_root

_INTERP = re.compile(r"\$\{\s*([A-Za-z0-9_.\-]+)\s*\}")


def _lookup(params: dict[str, Any], dotted: str) -> Any:
    cur: Any = params
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            raise KeyError(f"dvc.yaml interpolates ${{{dotted}}} but params.yaml has no such key")
        cur = cur[part]
    return cur


def interpolate(value: Any, params: dict[str, Any]) -> Any:
    if isinstance(value, str):
        return _INTERP.sub(lambda m: str(_lookup(params, m.group(1))), value)
    if isinstance(value, list):
        return [interpolate(v, params) for v in value]
    if isinstance(value, dict):
        return {interpolate(k, params): interpolate(v, params) for k, v in value.items()}
    return value


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


def load_stages(root: Path | None = None) -> dict[str, Stage]:
    root = root or repo_root()
    with open(root / "dvc.yaml") as fh:
        raw = yaml.safe_load(fh) or {}
    params = read_params_file(root / "params.yaml")
    stages: dict[str, Stage] = {}
    for name, spec in (raw.get("stages") or {}).items():
        spec = interpolate(spec, params)
        metrics = _paths(spec.get("metrics"))
        plots = [p for p in _paths(spec.get("plots"))]
        outs = _paths(spec.get("outs"))
        params_keys: list[str] = []
        for p in spec.get("params") or []:
            params_keys.extend(p if isinstance(p, list) else [p] if isinstance(p, str) else list(p))
        cmd = spec["cmd"] if isinstance(spec["cmd"], str) else " && ".join(spec["cmd"])
        meta = spec.get("meta") or {}
        stages[name] = Stage(name=name, cmd=cmd, deps=_paths(spec.get("deps")),
                             outs=outs + [m for m in metrics if m not in outs] +
                             [p for p in plots if p not in outs],
                             metrics=metrics, plots=plots, params=params_keys,
                             gpu=bool(meta.get("gpu", False)), meta=meta)
    return stages


def load_lock(root: Path | None = None) -> dict[str, Any]:
    root = root or repo_root()
    path = root / "dvc.lock"
    if not path.exists():
        return {}
    with open(path) as fh:
        return (yaml.safe_load(fh) or {}).get("stages", {})


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
