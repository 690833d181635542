"""The AutoOpt chain after M1: LaTeX -> M2 (rule-based) -> Pyomo script -> M3 (BOBD) -> solution.

Shared by the end-to-end stage (``chain/e2e.py``) and the one-image tool (``solve.py``). Generated scripts
are only ever built and solved inside the sandbox (``m2.sandbox.run_batch`` with a ``call`` task that
runs ``m3.bobd.solve_model`` on the model the script builds), never in this process.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SOLVE_TARGET = "stages.autoopt.m3.bobd:solve_model"
FEASIBILITY_TOL = 1e-6


@dataclass
class Outcome:
    """One problem through the chain: where it stopped and, if solved, what it found."""
    stage: str                        # "translate" | a sandbox stage ("timeout", "exec", ...) | "solved"
    error: str = ""
    script: str | None = None
    solution: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def solved(self) -> bool:
        return self.stage == "solved"


def translate_all(latex: list[str]) -> list[tuple[str | None, str]]:
    """(script, "") or (None, reason) per LaTeX string, with the rule-based translator (M2)."""
    from ..m2.rules import translate_many

    return [(script or None, err[:300]) for script, err in translate_many(latex)]


def solve_scripts(scripts: list[str | None], *, budget: int, seed: int | list[int], time_limit_s: float,
                  memory_mb: int, workers: int = 1, desc: str | None = None,
                  reasons: list[str] | None = None) -> list[Outcome]:
    """Build and solve each script with BOBD in the sandbox, with BOBD seed ``seed`` (or
    ``seed[k]`` for script k); None (not translated) passes through as a ``translate`` outcome with
    its reason. All scripts share one batch: its workers start once (a Python start and the Pyomo
    import, ~1 s each), however many seeds and splits the scripts come from."""
    from ..m2.sandbox import run_batch

    reasons = reasons or [""] * len(scripts)
    seeds = seed if isinstance(seed, list) else [seed] * len(scripts)
    if len(seeds) != len(scripts):
        raise ValueError(f"{len(seeds)} seeds for {len(scripts)} scripts")
    todo = [k for k, s in enumerate(scripts) if s is not None]
    outcomes = [Outcome("translate", reasons[k]) for k in range(len(scripts))]
    if todo:
        results = run_batch([scripts[k] for k in todo],
                            [{"kind": "call", "target": SOLVE_TARGET,
                              "kwargs": {"budget": int(budget), "seed": int(seeds[k])}} for k in todo],
                            time_limit_s=time_limit_s, memory_mb=memory_mb, workers=workers, desc=desc)
        for k, res in zip(todo, results):
            if res.ok and res.payload is not None:
                outcomes[k] = Outcome("solved", "", scripts[k], dict(res.payload), res.seconds)
            else:
                outcomes[k] = Outcome(res.stage, res.error[:300], scripts[k], {}, res.seconds)
    return outcomes


def success(outcome: Outcome, optimum: float | None, rel_tol: float) -> bool | None:
    """Solved, feasible (max violation <= 1e-6) and within rel_tol * max(1, |optimum|) of the known
    optimum; None when no optimum is known."""
    if optimum is None:
        return None
    if not outcome.solved:
        return False
    sol = outcome.solution
    value = sol.get("objective")
    if value is None or not sol.get("feasible", False):
        return False
    if float(sol.get("max_violation", 0.0)) > FEASIBILITY_TOL:
        return False
    return abs(float(value) - float(optimum)) <= rel_tol * max(1.0, abs(float(optimum)))
