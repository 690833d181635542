"""The sandbox (worker processes with time and memory limits) and the equivalence judge.

Sandbox: a hang is stopped by the alarm, and by the watchdog when the alarm is ignored; a
memory hog gets a MemoryError; a crash (os._exit) and a syntax error are recorded and the next
script still runs; scripts without build_model or without a model are told apart; "call" runs
a stages.autoopt target and refuses others; several workers give the same results as one.
Equivalence: hand-made pairs - a flipped >= (the same), a scaled constraint (the same), a changed
coefficient, bound, domain, sense, a missing constraint, a changed right-hand side (not)."""
from __future__ import annotations

import pytest

from stages.autoopt.m2.equivalence import REASONS, judge
from stages.autoopt.m2.sandbox import STAGES, run_batch

LIMITS = {"time_limit_s": 2.0, "memory_mb": 1024}

REF = """from pyomo.environ import *


def build_model():
    \"\"\"single problem; complexities: nonlinear.\"\"\"
    m = ConcreteModel()
    m.x = Var(RangeSet(1, 2), domain=Reals, bounds=(-3, 4))
    m.obj = Objective(expr=(2 * (m.x[1])**2) + m.x[2], sense=minimize)
    m.c1 = Constraint(expr=m.x[1] + 2 * m.x[2] >= -1)
    m.c2 = Constraint(expr=m.x[1] - m.x[2] <= 2)
    return m
"""
COMPARE = {"kind": "compare", "reference": REF, "points": 5, "seed": 3}


def variant(old: str, new: str) -> str:
    assert old in REF
    return REF.replace(old, new)


def test_failures_are_classified_and_the_batch_goes_on():
    scripts = {
        "ok": REF,
        "timeout": "while True:\n    pass\n",
        "crash": "import os\nos._exit(3)\n",
        "after_crash": REF,
        "syntax": "def build_model(:\n",
        "no_build_model": "x = 1\n",
        "not_a_model": "def build_model():\n    return 3\n",
        "memory": "def build_model():\n    return bytearray(3 * 1024 ** 3)\n",
        "after_memory": REF,
        "exec": "from pyomo.environ import *\ndef build_model():\n    raise ValueError('no model today')\n",
        "watchdog": ("import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                     "while True:\n    pass\n"),
        "after_watchdog": REF,
        "prints": "print('noise on stdout')\n" + REF,
    }
    res = dict(zip(scripts, run_batch(list(scripts.values()), COMPARE, grace_s=1.0,
                                      **{**LIMITS, "time_limit_s": 1.0})))
    expect = {"ok": "ok", "timeout": "timeout", "crash": "crash", "after_crash": "ok", "syntax": "syntax",
              "no_build_model": "no_build_model", "not_a_model": "not_a_model", "memory": "memory",
              "after_memory": "ok", "exec": "exec", "watchdog": "timeout", "after_watchdog": "ok", "prints": "ok"}
    assert {k: r.stage for k, r in res.items()} == expect
    assert set(expect.values()) <= set(STAGES)
    assert "alarm" in res["timeout"].error and "watchdog" in res["watchdog"].error
    assert "exit 3" in res["crash"].error and "no model today" in res["exec"].error
    assert res["watchdog"].seconds < 1.0 + 1.0 + 2.0         # limit + grace + a worker start
    assert res["ok"].ok and not res["crash"].ok and res["crash"].payload is None
    assert judge(res["prints"].payload).equivalent


def test_the_worker_runs_in_a_temp_folder_with_a_minimal_environment():
    script = ("import os, sys\ndef build_model():\n"
              "    raise RuntimeError(os.getcwd() + ' | ' + ','.join(sorted(os.environ)) + ' | ' + str(sys.flags.isolated))\n")
    (r,) = run_batch([script], COMPARE, **LIMITS)
    cwd, env, isolated = r.error.split(" | ")
    assert r.stage == "exec" and "autoopt-sandbox-" in cwd
    assert "PYTHONPATH" not in env and "HOME" in env and "MLFLOW_TRACKING_URI" not in env
    assert isolated.startswith("1")


def test_call_runs_a_stages_autoopt_target_and_refuses_others():
    good = {"kind": "call", "target": "stages.autoopt.m2.sandbox_worker:variables_of", "kwargs": {}}
    bad = {"kind": "call", "target": "os:system", "kwargs": {"command": "true"}}
    r_good, r_bad = run_batch([REF, REF], [good, bad], **LIMITS)
    assert r_good.ok and r_good.payload["x"]["bounds"] == [[-3.0, 4.0], [-3.0, 4.0]]
    assert r_good.payload["x"]["domain"] == ["real", "real"]
    assert r_bad.stage == "task_error" and "stages.autoopt" in r_bad.error


def test_two_workers_give_the_same_results_as_one():
    scripts = [REF, "import os\nos._exit(1)", variant("2 * (m.x[1])**2", "3 * (m.x[1])**2"), REF, "x=", REF]
    one = run_batch(scripts, COMPARE, **LIMITS)
    two = run_batch(scripts, COMPARE, workers=2, **LIMITS)
    assert [(r.stage, r.payload) for r in one] == [(r.stage, r.payload) for r in two]


@pytest.mark.parametrize("kwargs, message", [
    ({"time_limit_s": 0, "memory_mb": 1024}, "time_limit_s"),
    ({"time_limit_s": 1, "memory_mb": 10}, "memory_mb"),
    ({"time_limit_s": 1, "memory_mb": 1024, "workers": 0}, "workers"),
])
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        run_batch([REF], COMPARE, **kwargs)
    with pytest.raises(ValueError, match="kind"):
        run_batch([REF], {"kind": "solve"}, **LIMITS)


# --------------------------------------------------------------------------- equivalence
PAIRS = {
    # name: (candidate, equivalent?, reason when not)
    "identical": (REF, True, ""),
    "flipped_geq": (variant("m.x[1] + 2 * m.x[2] >= -1", "-1 <= m.x[1] + 2 * m.x[2]"), True, ""),
    "flipped_leq_as_geq": (variant("m.x[1] - m.x[2] <= 2", "- m.x[1] + m.x[2] >= -2"), True, ""),
    "scaled_constraint": (variant("m.x[1] - m.x[2] <= 2", "3 * m.x[1] - 3 * m.x[2] <= 6"), True, ""),
    "constraints_reordered": (variant(
        "    m.c1 = Constraint(expr=m.x[1] + 2 * m.x[2] >= -1)\n    m.c2 = Constraint(expr=m.x[1] - m.x[2] <= 2)\n",
        "    m.a = Constraint(expr=m.x[1] - m.x[2] <= 2)\n    m.b = Constraint(expr=m.x[1] + 2 * m.x[2] >= -1)\n"), True, ""),
    "changed_coefficient": (variant("(2 * (m.x[1])**2)", "(3 * (m.x[1])**2)"), False, "objective_values"),
    "changed_bound": (variant("bounds=(-3, 4)", "bounds=(-3, 5)"), False, "variables"),
    "integer_domain": (variant("domain=Reals", "domain=Integers"), False, "variables"),
    "renamed_variable": (variant("m.x = Var", "m.z = Var").replace("m.x[", "m.z["), False, "variables"),
    "max_instead_of_min": (variant("sense=minimize", "sense=maximize"), False, "objective_sense"),
    "missing_constraint": (variant("    m.c2 = Constraint(expr=m.x[1] - m.x[2] <= 2)\n", ""), False, "constraint_count"),
    "changed_rhs": (variant("<= 2)", "<= 3)"), False, "constraint_values"),
    "flipped_direction": (variant("<= 2)", ">= 2)"), False, "constraint_values"),
}


@pytest.fixture(scope="module")
def verdicts():
    names = list(PAIRS)
    results = run_batch([PAIRS[n][0] for n in names], COMPARE, **LIMITS)
    assert all(r.ok for r in results), [(n, r.stage, r.error) for n, r in zip(names, results) if not r.ok]
    return {n: judge(r.payload) for n, r in zip(names, results)}


@pytest.mark.parametrize("name", list(PAIRS))
def test_hand_made_pairs(verdicts, name):
    _, same, reason = PAIRS[name]
    assert (verdicts[name].equivalent, verdicts[name].reason) == (same, reason), verdicts[name].detail
    assert reason == "" or reason in REASONS


def test_compare_payload_holds_the_raw_numbers():
    (r,) = run_batch([REF], COMPARE, **LIMITS)
    ref = r.payload["reference"]
    assert len(ref["objectives"][0]["values"]) == 5
    # c1: x1 + 2 x2 >= -1 becomes the piece -1 - (x1 + 2 x2) <= 0
    assert [c["kind"] for c in ref["constraints"]] == ["ineq", "ineq"]
    assert r.payload["candidate"] == ref


def test_bilevel_lower_level_counts_with_its_block_and_state():
    bilevel = variant("    return m\n", "    m.lower = Block()\n    m.lower.obj = Objective(expr=(m.x[2] - m.x[1])**2)\n"
                                     "    m.lower.c1 = Constraint(expr=m.x[2] <= 3)\n    m.lower.obj.deactivate()\n    return m\n")
    active = bilevel.replace("    m.lower.obj.deactivate()\n", "")
    flat = bilevel.replace("m.lower.c1 = Constraint", "m.c3 = Constraint")
    task = dict(COMPARE, reference=bilevel)
    same, act, fl = (judge(r.payload) for r in run_batch([bilevel, active, flat], task, **LIMITS))
    assert same.equivalent
    assert act.reason == "objective_sense"
    assert fl.reason == "constraint_count"


def test_judge_validates_its_input():
    with pytest.raises(ValueError, match="reference"):
        judge({"candidate": {}})
    with pytest.raises(ValueError, match="tolerances"):
        judge({"reference": {}, "candidate": {}}, rel_tol=0)


def test_undefined_values_on_both_sides_count_as_equal():
    """log of a negative: both models undefined at the same points is agreement, one side only is not."""
    ref = variant("(2 * (m.x[1])**2) + m.x[2]", "log(m.x[1])")
    other = variant("(2 * (m.x[1])**2) + m.x[2]", "log(m.x[1]) + 0 * m.x[2]")
    differs = variant("(2 * (m.x[1])**2) + m.x[2]", "log(abs(m.x[1]))")
    task = dict(COMPARE, reference=ref, points=8)
    a, b = (judge(r.payload) for r in run_batch([other, differs], task, **LIMITS))
    assert a.equivalent and b.reason == "objective_values"


def test_call_results_become_plain_json():
    import math

    import numpy as np

    from stages.autoopt.m2.sandbox_worker import _plain

    out = _plain({"x": (1, np.float64(2.5)), "f": math.inf, "g": float("nan"), "n": np.int64(3), 4: [True, None]})
    assert out == {"x": [1, 2.5], "f": None, "g": None, "n": 3, "4": [True, None]}


def test_pyomo_output_capture_works_in_a_worker():
    """Pyomo's appsi HiGHS interface captures the solver's output with threads (TeeStream); it
    deadlocked when the worker's stdout was a duplicate of its stderr. An LP through BOBD's HiGHS
    path must solve well inside the limit: max 4 x1 - 8 x2 on this box is at (8, -10), value 112."""
    lp = """from pyomo.environ import *


def build_model():
    m = ConcreteModel()
    m.x = Var(RangeSet(1, 2), domain=Reals, bounds=(-10, 8))
    m.obj = Objective(expr=4 * m.x[1] - 8 * m.x[2], sense=maximize)
    m.c1 = Constraint(expr=m.x[1] + m.x[2] <= 20)
    return m
"""
    task = {"kind": "call", "target": "stages.autoopt.m3.bobd:solve_model", "kwargs": {"budget": 100, "seed": 0}}
    (r,) = run_batch([lp], task, time_limit_s=20.0, memory_mb=4096)
    assert r.ok, (r.stage, r.error)
    assert r.payload["solver"] == "highs" and r.payload["objective"] == pytest.approx(112.0)
    assert r.seconds < 10
