"""Is a translated Pyomo model the same model as the reference? Judged from the sandbox's
"compare" payload (both models evaluated at the same random points of the reference's box).

Our definition (the paper states none): two models are equivalent when, in this order,

1. ``variables``: the same variable components (names), each with the same index set, the same
   bounds (within the tolerances) and the same integrality at every index;
2. ``objective_count`` / ``objective_sense``: as many objectives, in the same order, with the
   same sense, the same block (upper level, or the bilevel ``lower`` block) and the same
   active/deactivated state;
3. ``objective_values``: every objective's values equal at every point
   (``math.isclose(a, b, rel_tol, abs_tol)``; both undefined - a domain error - counts as equal);
4. ``constraint_count`` / ``constraint_values``: the constraints equal as a multiset, block by
   block, after writing each as pieces g(x) <= 0 (``a >= b`` is ``b - a <= 0``, a ranged one two
   pieces) and h(x) = 0, each piece's values at the points divided by their largest magnitude
   (a positive multiple of a constraint is the same constraint; an equality also up to sign).

The first failing check is the verdict's ``reason``, so a stage can count failure reasons.
Random points can miss a difference that lives on a set of measure zero (a jump moved by less
than the points resolve); more points make that less likely, never impossible.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

REASONS = ("variables", "objective_count", "objective_sense", "objective_values",
           "constraint_count", "constraint_values")


@dataclass(frozen=True)
class Verdict:
    equivalent: bool
    reason: str          # "" when equivalent, else one of REASONS
    detail: str = ""


def _close(a, b, rel_tol: float, abs_tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)


def _same_vector(u, v, rel_tol, abs_tol) -> bool:
    return len(u) == len(v) and all(_close(a, b, rel_tol, abs_tol) for a, b in zip(u, v))


def _normalised(values: list, kind: str, abs_tol: float) -> list:
    finite = [abs(v) for v in values if v is not None]
    scale = max(finite, default=0.0)
    out = [None if v is None else (v / scale if scale > abs_tol else 0.0) for v in values]
    if kind == "eq":
        first = next((v for v in out if v is not None and abs(v) > abs_tol), None)
        if first is not None and first < 0:
            out = [None if v is None else -v for v in out]
    return out


def _check_variables(ref: dict, cand: dict, rel_tol: float, abs_tol: float) -> str:
    if sorted(ref) != sorted(cand):
        return f"variables {sorted(cand)} vs {sorted(ref)} in the reference"
    for name, r in ref.items():
        c = cand[name]
        rmap = dict(zip(r["index"], zip(r["bounds"], r["domain"])))
        cmap = dict(zip(c["index"], zip(c["bounds"], c["domain"])))
        if set(rmap) != set(cmap):
            return f"{name}: index set of {len(cmap)} vs {len(rmap)} in the reference"
        for i, ((rb, rd), (cb, cd)) in ((i, (rmap[i], cmap[i])) for i in rmap):
            if not all(_close(a, b, rel_tol, abs_tol) for a, b in zip(rb, cb)):
                return f"{name}[{i}]: bounds {cb} vs {rb} in the reference"
            if (rd == "real") != (cd == "real"):
                return f"{name}[{i}]: domain {cd} vs {rd} in the reference"
    return ""


def judge(payload: dict, rel_tol: float = 1e-6, abs_tol: float = 1e-6) -> Verdict:
    """The verdict on a sandbox "compare" payload (``{"reference": ..., "candidate": ...}``)."""
    if not (rel_tol > 0 and abs_tol > 0):
        raise ValueError(f"tolerances must be > 0, got rel_tol={rel_tol}, abs_tol={abs_tol}")
    try:
        ref, cand = payload["reference"], payload["candidate"]
    except (KeyError, TypeError):
        raise ValueError("a compare payload holds 'reference' and 'candidate'") from None
    msg = _check_variables(ref["variables"], cand["variables"], rel_tol, abs_tol)
    if msg:
        return Verdict(False, "variables", msg)

    ro, co = ref["objectives"], cand["objectives"]
    if len(ro) != len(co):
        return Verdict(False, "objective_count", f"{len(co)} objectives vs {len(ro)} in the reference")
    for k, (r, c) in enumerate(zip(ro, co)):
        if (r["sense"], r["block"], r["active"]) != (c["sense"], c["block"], c["active"]):
            return Verdict(False, "objective_sense",
                           f"objective {k + 1}: {c['sense']} in block {c['block']!r} (active {c['active']}) vs "
                           f"{r['sense']} in {r['block']!r} (active {r['active']}) in the reference")
    for k, (r, c) in enumerate(zip(ro, co)):
        if not _same_vector(r["values"], c["values"], rel_tol, abs_tol):
            return Verdict(False, "objective_values",
                           f"objective {k + 1}: {c['values'][:3]} vs {r['values'][:3]} in the reference")

    def groups(cons):
        out: dict[tuple, list] = {}
        for c in cons:
            out.setdefault((c["block"], c["kind"]), []).append(_normalised(c["values"], c["kind"], abs_tol))
        return out

    rg, cg = groups(ref["constraints"]), groups(cand["constraints"])
    count = lambda g: {k: len(v) for k, v in sorted(g.items())}  # noqa: E731
    if count(rg) != count(cg):
        return Verdict(False, "constraint_count",
                       f"constraint pieces (block, kind): {count(cg)} vs {count(rg)} in the reference")
    for key, rvecs in rg.items():
        unused = list(cg[key])
        for j, rv in enumerate(rvecs):
            hit = next((n for n, cv in enumerate(unused) if _same_vector(rv, cv, rel_tol, abs_tol)), None)
            if hit is None:
                return Verdict(False, "constraint_values",
                               f"reference constraint piece {j + 1} of {key} matches none of the candidate's")
            unused.pop(hit)
    return Verdict(True, "")
