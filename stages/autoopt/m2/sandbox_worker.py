"""The sandbox's worker process: runs generated Pyomo scripts one after another.

Started by :mod:`stages.autoopt.m2.sandbox` as ``python -I sandbox_worker.py <repo root>`` in a
temporary folder, with an address-space limit and a minimal environment. It reads one JSON
request a line on its stdin and answers one JSON line on a private copy of its stdout (the
script's own prints go to stderr, which the parent sends to a file). Each script runs under a
SIGALRM wall-clock limit; the parent also watches the clock and kills this process if the alarm
cannot fire (time spent inside C code).

Request: ``{"script": str, "task": {...}, "time_limit_s": float}``; answer: ``{"stage": ...,
"error": str, "payload": dict | None}`` with the stages of :class:`sandbox.SandboxResult`.
The first line written is ``{"ready": true}``, once Pyomo is imported.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import random
import re
import signal
import sys
import traceback


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so a script's ``except Exception`` does not eat it."""


def _on_alarm(signum, frame):  # noqa: ARG001
    raise _Timeout()


def _short(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    where = next((f"line {f.lineno}" for f in reversed(tb) if f.filename == "<generated>"), "")
    return (f"{type(exc).__name__}: {exc}" + (f" ({where})" if where else ""))[:500]


def _finite(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


# --------------------------------------------------------------------------- describing a model
def _variables(model):
    import pyomo.environ as pe

    out = {}
    for comp in model.component_objects(pe.Var, descend_into=True):
        idx, bounds, domain = [], [], []
        for i in comp:
            v = comp[i]
            idx.append(repr(i))
            bounds.append([_finite(v.lb) if v.lb is not None else None,
                           _finite(v.ub) if v.ub is not None else None])
            domain.append("integer" if v.is_integer() else "binary" if v.is_binary() else "real")
        out[comp.name] = {"index": idx, "bounds": bounds, "domain": domain}
    return out


def sample_points(variables: dict, k: int, seed: int) -> list[dict]:
    """k points of the variables' box: integers for integer variables, uniform reals otherwise;
    a missing bound is taken as 10 away from the other (or +-10)."""
    rng = random.Random(seed)
    pts = []
    for _ in range(k):
        p = {}
        for name, d in variables.items():
            vals = {}
            for i, (lo, hi), dom in zip(d["index"], d["bounds"], d["domain"]):
                lo = lo if lo is not None else ((hi - 10) if hi is not None else -10.0)
                hi = hi if hi is not None else lo + 10
                if dom != "real":
                    vals[i] = float(rng.randint(math.ceil(lo), math.floor(hi))) if math.ceil(lo) <= math.floor(hi) else lo
                else:
                    vals[i] = rng.uniform(lo, hi)
            p[name] = vals
        pts.append(p)
    return pts


def _set_point(model, point: dict) -> None:
    import pyomo.environ as pe

    for comp in model.component_objects(pe.Var, descend_into=True):
        vals = point.get(comp.name, {})
        for i in comp:
            comp[i].set_value(vals.get(repr(i), 0.0), skip_validation=True)


def _value(expr):
    import pyomo.environ as pe

    try:
        return _finite(pe.value(expr))
    except (ArithmeticError, ValueError, TypeError):
        return None


def evaluate(model, points: list[dict]) -> dict:
    """Every objective (active or not, with its sense and block) and every constraint, as
    g(x) <= 0 pieces ("ineq") and h(x) = 0 pieces ("eq"), at each point."""
    import pyomo.environ as pe

    objs = list(model.component_data_objects(pe.Objective, descend_into=True))
    cons = list(model.component_data_objects(pe.Constraint, descend_into=True))
    o_out = [{"name": o.name, "block": o.parent_block().name if o.parent_block() is not model else "",
              "sense": "min" if o.sense == pe.minimize else "max", "active": bool(o.active), "values": []}
             for o in objs]
    c_out = []
    pieces = []   # (constraint, kind, fn)
    for c in cons:
        block = c.parent_block().name if c.parent_block() is not model else ""
        if c.equality:
            pieces.append((c, block, "eq", lambda c=c: _diff(c.body, c.upper)))
        else:
            if c.upper is not None:
                pieces.append((c, block, "ineq", lambda c=c: _diff(c.body, c.upper)))
            if c.lower is not None:
                pieces.append((c, block, "ineq", lambda c=c: _diff(c.lower, c.body)))
    c_out = [{"name": c.name, "block": block, "kind": kind, "values": []} for c, block, kind, _ in pieces]
    for p in points:
        _set_point(model, p)
        for o, d in zip(objs, o_out):
            d["values"].append(_value(o.expr))
        for (_, _, _, fn), d in zip(pieces, c_out):
            d["values"].append(fn())
    return {"variables": _variables(model), "objectives": o_out, "constraints": c_out}


def _diff(a, b):
    va, vb = _value(a), _value(b)
    return None if va is None or vb is None else va - vb


def variables_of(model) -> dict:
    """A "call" target: the model's variables (names, indices, bounds, domains)."""
    return _variables(model)


# --------------------------------------------------------------------------- tasks
_REF_CACHE: dict[str, tuple] = {}
_TARGET = re.compile(r"^stages\.autoopt\.[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")


def _build(script: str, name: str):
    ns = {"__name__": name}
    exec(compile(script, f"<{name}>", "exec"), ns)  # noqa: S102 - this process is the sandbox
    return ns["build_model"]()


def task_compare(model, task: dict) -> dict:
    """Build the (trusted) reference, sample points in its box, evaluate both models there."""
    ref = task["reference"]
    k, seed = int(task.get("points", 5)), int(task.get("seed", 0))
    key = hashlib.sha256(f"{k}:{seed}:{ref}".encode()).hexdigest()
    if key not in _REF_CACHE:
        ref_model = _build(ref, "reference")
        points = sample_points(_variables(ref_model), k, seed)
        if len(_REF_CACHE) > 64:
            _REF_CACHE.clear()
        _REF_CACHE[key] = (points, evaluate(ref_model, points))
    points, ref_desc = _REF_CACHE[key]
    return {"points": k, "reference": ref_desc, "candidate": evaluate(model, points)}


def task_call(model, task: dict) -> dict:
    target = str(task.get("target", ""))
    if not _TARGET.match(target):
        raise ValueError(f"call target must be 'stages.autoopt.<module>:<function>', got {target!r}")
    mod, fn = target.split(":")
    result = getattr(importlib.import_module(mod), fn)(model, **dict(task.get("kwargs") or {}))
    if not isinstance(result, dict):
        raise TypeError(f"{target} returned {type(result).__name__}, not a dict")
    result = _plain(result)
    json.dumps(result, allow_nan=False)
    return result


def _plain(obj):
    """A target's result with non-finite floats as None and numpy scalars / tuples as plain
    Python (JSON has no inf or NaN)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if hasattr(obj, "item") and callable(obj.item):       # numpy scalar
        obj = obj.item()
    return _finite(obj) if isinstance(obj, float) else obj


TASKS = {"compare": task_compare, "call": task_call}


def handle(req: dict) -> dict:
    import pyomo.environ as pe

    script, task = req.get("script"), req.get("task") or {}
    if task.get("kind") not in TASKS:
        return {"stage": "task_error", "error": f"unknown task kind {task.get('kind')!r}", "payload": None}
    signal.setitimer(signal.ITIMER_REAL, float(req["time_limit_s"]))
    stage = "syntax"
    try:
        code = compile(script, "<generated>", "exec")
        stage = "exec"
        ns = {"__name__": "__generated__"}
        exec(code, ns)  # noqa: S102 - this process is the sandbox
        build = ns.get("build_model")
        if not callable(build):
            return {"stage": "no_build_model", "error": "the script defines no build_model()", "payload": None}
        model = build()
        if not isinstance(model, pe.Block):
            return {"stage": "not_a_model", "error": f"build_model() returned {type(model).__name__}",
                    "payload": None}
        stage = "task_error"
        payload = TASKS[task["kind"]](model, task)
        return {"stage": "ok", "error": "", "payload": payload}
    except _Timeout:
        return {"stage": "timeout", "error": f"over {req['time_limit_s']} s (alarm)", "payload": None}
    except MemoryError:
        return {"stage": "memory", "error": "MemoryError (address-space limit)", "payload": None}
    except BaseException as exc:  # noqa: BLE001 - anything a script raises is a result
        return {"stage": stage, "error": _short(exc), "payload": None}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def main() -> None:
    root = sys.argv[1]
    sys.path.insert(0, root)
    proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    # a script's prints go to a file of their own in the worker's folder, not the protocol. Not
    # fd 2 duplicated onto fd 1: Pyomo's output capture (TeeStream, e.g. in the appsi HiGHS
    # interface) deadlocks when stdout and stderr share one open file
    out = os.open("stdout.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.close(out)
    sys.stdout = os.fdopen(1, "w", encoding="utf-8", buffering=1, closefd=False)
    signal.signal(signal.SIGALRM, _on_alarm)
    import pyomo.environ  # noqa: F401 - the ~1 s import, once per worker

    proto_out.write(json.dumps({"ready": True}) + "\n")
    proto_out.flush()
    for line in proto_in:
        try:
            req = json.loads(line)
        except json.JSONDecodeError as err:
            ans = {"stage": "task_error", "error": f"bad request: {err}", "payload": None}
        else:
            try:
                ans = handle(req)
            except _Timeout:              # the alarm fired between the script's end and its reset
                ans = {"stage": "timeout", "error": f"over {req.get('time_limit_s')} s (alarm)", "payload": None}
        try:
            text = json.dumps(ans, allow_nan=False)
        except (TypeError, ValueError) as err:
            text = json.dumps({"stage": "task_error", "error": f"result not JSON: {err}", "payload": None})
        proto_out.write(text + "\n")
        proto_out.flush()


if __name__ == "__main__":
    main()
