"""The rule-based LaTeX -> Pyomo translator: round trip generator -> LaTeX -> translate ->
equivalent to the generator's own script (in the sandbox) on every problem type, complexity and
layout; the script text itself on hand-written cases; clean, fast TranslationErrors on garbage."""
from __future__ import annotations

import random
import time

import pytest

from stages.autoopt.data import grammar as g
from stages.autoopt.m2.docstring import strip_docstring
from stages.autoopt.m2.rules import MAX_TOKENS, TranslationError, parse, translate, translate_many

from .conftest import GEN

# three generator settings: the tests' usual one, more complexities, and long inline problems
CONFIGS = [GEN, dict(GEN, complexity_rate=0.8, inline_share=0.5),
           dict(GEN, complexity_rate=0.6, n_choices=[50, 100], inline_share=1.0)]
SEEDS_PER_CONFIG = 100


@pytest.fixture(scope="module")
def problems():
    return [g.generate(1000 * j + s, **cfg) for j, cfg in enumerate(CONFIGS) for s in range(SEEDS_PER_CONFIG)]


def test_the_round_trip_covers_every_type_complexity_and_layout(problems):
    assert {p.ptype for p in problems} == set(g.TYPES)
    assert {c for p in problems for c in p.complexities} == set(g.COMPLEXITIES)
    assert {p.layout for p in problems} == {"lines", "inline"}
    assert {p.integer for p in problems} == {True, False}
    assert {p.meta["family"] for p in problems} == {"lp", "planted", "free"}
    assert max(p.n for p in problems) == 100
    assert any(p.lower_objective is not None and any(c.level == "lower" for c in p.constraints) for p in problems)


def test_round_trip_is_equivalent_in_the_sandbox(problems):
    """300 generator seeds: every translation builds a model equivalent to the reference."""
    from stages.autoopt.m2.equivalence import judge
    from stages.autoopt.m2.sandbox import run_batch

    scripts = [translate(p.latex()) for p in problems]
    tasks = [{"kind": "compare", "reference": p.pyomo(), "points": 4, "seed": k} for k, p in enumerate(problems)]
    results = run_batch(scripts, tasks, time_limit_s=20, memory_mb=2048, workers=2)
    bad = [(k, r.stage, r.error) for k, r in enumerate(results) if not r.ok]
    assert not bad, bad[:3]
    verdicts = [judge(r.payload) for r in results]
    wrong = [(k, v.reason, v.detail, problems[k].latex()) for k, v in enumerate(verdicts) if not v.equivalent]
    assert not wrong, wrong[:3]


def test_round_trip_text_equals_the_reference_where_the_latex_shows_everything(problems):
    """The script is the reference minus its docstring, except where the reference multiplies by
    a coefficient 1 that the LaTeX does not write (``(1 * sin(...))``: same value, other text)."""
    same = other = 0
    for p in problems:
        ref, out = strip_docstring(p.pyomo()), translate(p.latex())
        if "(1 * " in ref:
            other += 1
            continue
        assert out == ref, p.latex()
        same += 1
    assert same > 200 and other > 0


def test_hand_written_latex_gives_the_expected_script():
    latex = (r"\max_{x} \quad 3 x_{1}^{2} - |x_{2} - 1| + \sum_{i=1}^{3} i x_{i} \\ "
             r"\mathrm{s.t.} \quad x_{1} + x_{2} \geq -1 \\ x_{1} = 2 \\ x \in \{-4, \ldots, 12\}^{3}")
    script = translate(latex)
    assert script == (
        "from pyomo.environ import *\n\n\ndef build_model():\n    m = ConcreteModel()\n"
        "    m.x = Var(RangeSet(1, 3), domain=Integers, bounds=(-4, 12))\n"
        "    m.obj = Objective(expr=((3 * (m.x[1])**2) - abs((m.x[2] - (1))) + "
        "sum((1 * i * m.x[i]) for i in range(1, 4))), sense=maximize)\n"
        "    m.c1 = Constraint(expr=(m.x[1] + m.x[2]) >= -1)\n"
        "    m.c2 = Constraint(expr=m.x[1] == 2)\n"
        "    return m\n")


def test_stochastic_bilevel_and_nested_bars_parse_to_the_right_tree():
    f = parse(r"\min_{x} \quad \mathbb{E}_{\xi}[\xi |x_{1} - |x_{2}||] , \quad \xi \sim \mathcal{U}\{2, 5\} , "
              r"\quad x \in [-1, 1]^{2}")
    obj = f.objectives[0]
    assert isinstance(obj, g.Expect) and obj.values == (2, 5)
    env = {"x": {1: 0.5, 2: -0.25}}
    # E[xi |x1 - |x2||] = mean(2, 5) * |0.5 - 0.25|
    assert obj.ev(env) == pytest.approx(3.5 * 0.25)
    f = parse(r"\min_{x,y} \quad x_{1} + y_{1} \\ \mathrm{s.t.} \quad y \in \arg \min_{y} \{ (y_{1} - x_{1})^{2} : "
              r"y_{1} \leq 3, \quad y_{1} \geq -3 \} \\ x \in [0, 1]^{1} \\ y \in [-5, 5]^{1}")
    assert [c.level for c in f.constraints] == ["lower", "lower"]
    assert f.lower_objective.ev({"x": {1: 1.0}, "y": {1: 4.0}}) == 9.0
    script = translate(r"\min_{x} \quad \left\{ x_{1} \quad \mathrm{if} \quad x_{1} \leq -2 , \quad 3 \quad "
                       r"\mathrm{else} \right. + \lfloor x_{2} \rfloor + \max(0, x_{1} - 1) \\ x \in [-3, 3]^{2}")
    assert "Expr_if(IF=m.x[1] <= -2, THEN=m.x[1], ELSE=(3))" in script and "floor(m.x[2])" in script


GARBAGE = [
    "", "   ", r"\min", r"\min_{x} \quad", r"\min_{x} \quad x_{1} +", r"\min_{x} \quad x_{1} \\ x \in [0, 1]",
    r"\min_{x} \quad ( x_{1}", r"\min_{x} \quad x_{1} \\ x \in [0 , 1 ]^{2} \\ \\", "x \\",
    r"\frac{1}{2}", r"\min_{z} \quad z_{1} \\ z \in [0, 1]^{1}", "print('hello')",
    r"\min_{x} \quad | | | | | x_{1}", r"\min _ { x } \quad x _ { 1 } \\ x \in [ 3 , 1 ] ^ { 2 }",
]


@pytest.mark.parametrize("text", GARBAGE)
def test_garbage_raises_a_translation_error(text):
    with pytest.raises(TranslationError):
        translate(text)


@pytest.mark.parametrize("latex, message", [
    (r"\min_{x} \quad x_{3} \\ x \in [0, 1]^{2}", "beyond its dimension"),
    (r"\min_{x} \quad x_{1} + y_{1} \\ x \in [0, 1]^{2}", "y has no domain"),
    (r"\min_{x} \quad \sum_{i=1}^{5} x_{i} \\ x \in [0, 1]^{2}", "a sum to 5"),
    (r"\min_{x} \quad \mathbb{E}_{\xi}[\xi x_{1}] \\ x \in [0, 1]^{2}", r"\xi \sim"),
    (r"\min_{x} \quad x_{1} \\ x \in [2, 1]^{2}", "above upper bound"),
    (r"\min_{x} \quad x_{1} \\ x \in [0, 1]^{2} \\ x \in [0, 1]^{2}", "two domains"),
    (r"\min_{x} \quad x_{1} \\ x \in [0, 1]^{2} @", "cannot parse"),
    ("x " * (MAX_TOKENS + 1), "more than"),
    (r"\min_{x} \quad " + "( " * 300 + "x_{1}" + " )" * 300 + r" \\ x \in [0, 1]^{1}", "nested too deeply"),
])
def test_errors_say_what_is_wrong(latex, message):
    with pytest.raises(TranslationError, match=None) as info:
        translate(latex)
    assert message in str(info.value)


def test_non_string_input_is_an_error():
    with pytest.raises(TranslationError, match="must be a str"):
        translate(None)  # type: ignore[arg-type]


def test_shuffled_and_truncated_latex_fails_cleanly_and_fast():
    """M1-like damage (tokens dropped, swapped, cut): a script or a TranslationError, never
    another exception, and quickly."""
    rng = random.Random(0)
    texts = []
    for s in range(60):
        toks = g.generate(s, **GEN).latex().split(" ")
        op = s % 3
        if op == 0:
            del toks[rng.randrange(len(toks))]
        elif op == 1:
            i, j = rng.randrange(len(toks)), rng.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        else:
            toks = toks[:rng.randrange(1, len(toks))]
        texts.append(" ".join(toks * (1 + s % 2)))
    t0 = time.perf_counter()
    out = translate_many(texts)
    assert time.perf_counter() - t0 < 10
    assert all((s and not e) or (e and not s) for s, e in out)
    assert sum(bool(e) for _, e in out) > 30


def test_strip_docstring_removes_only_the_docstring_line():
    p = g.generate(5, **GEN)
    ref = p.pyomo()
    stripped = strip_docstring(ref)
    assert '"""' in ref and '"""' not in stripped
    assert ref.count("\n") - stripped.count("\n") == 1
