"""A grammar of optimisation formulations in the AutoOpt-11k style.

Every formulation is an expression tree that writes itself three ways from one source:

* ``tex()``: canonical LaTeX tokens (mathtext-compatible, so the renderer can draw it);
* ``py()``: Pyomo source (the sample's script builds the same model);
* ``ev(env)``: its value at a point (tests compare it with the Pyomo model's value).

:func:`generate` draws a problem of one of the paper's four types (single-objective,
multi-objective, bilevel, stochastic) with a set of complexities (non-linear, non-convex,
non-differentiable, discontinuous, integer, high-dimensional: an indexed sum over n up to 100).
Where the generator can know the optimum it records it:

* ``planted``: the objective is a constant plus terms that are each >= 0 and zero at a planted
  integer point c that satisfies every constraint, so the optimum is the constant, attained at c
  (min; a max problem is the negation);
* ``lp``: linear objective and constraints on a box (integer variables make it a MILP), feasible by
  construction (the right-hand sides hold at a point of the box); the optimum is solved with HiGHS
  through Pyomo by :func:`solve_linear`.
Multi-objective, bilevel and free-form non-linear problems carry no optimum (``None``).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

TYPES = ("single", "multi", "bilevel", "stochastic")
COMPLEXITIES = ("nonlinear", "nonconvex", "nondifferentiable", "discontinuous", "integer",
                "high_dim")


# --------------------------------------------------------------------------- expression tree
class Expr:
    prec = 3  # 1 sum, 2 product, 3 atom

    def tex(self) -> list[str]:
        raise NotImplementedError

    def py(self) -> str:
        raise NotImplementedError

    def ev(self, env: dict[str, Any]) -> float:
        raise NotImplementedError


def _paren_tex(e: Expr, below: int) -> list[str]:
    return ["(", *e.tex(), ")"] if e.prec < below else e.tex()


def _digits(v: int) -> list[str]:
    return list(str(v))


@dataclass(frozen=True)
class Num(Expr):
    value: int

    @property
    def prec(self) -> int:  # type: ignore[override]
        return 1 if self.value < 0 else 3

    def tex(self) -> list[str]:
        return (["-"] + _digits(-self.value)) if self.value < 0 else _digits(self.value)

    def py(self) -> str:
        return f"({self.value})"

    def ev(self, env):
        return float(self.value)


@dataclass(frozen=True)
class Var(Expr):
    """x_{3}: one component of a vector variable (``name`` in x, y)."""
    name: str
    index: int

    def tex(self):
        return [self.name, "_", "{", *_digits(self.index), "}"]

    def py(self):
        return f"m.{self.name}[{self.index}]"

    def ev(self, env):
        return float(env[self.name][self.index])


@dataclass(frozen=True)
class IVar(Expr):
    """x_{i}: the summed component inside an indexed sum."""
    name: str

    def tex(self):
        return [self.name, "_", "{", "i", "}"]

    def py(self):
        return f"m.{self.name}[i]"

    def ev(self, env):
        return float(env[self.name][env["i"]])


@dataclass(frozen=True)
class Sym(Expr):
    """A scalar the point supplies: the summation index i, or the random parameter xi."""
    token: str
    code: str

    def tex(self):
        return [self.token]

    def py(self):
        return self.code

    def ev(self, env):
        return float(env[self.code])


def Idx() -> Sym:  # noqa: N802 - reads like the other node constructors
    return Sym("i", "i")


def Xi() -> Sym:  # noqa: N802
    return Sym("\\xi", "xi")


@dataclass(frozen=True)
class Add(Expr):
    """sum of (sign, term); sign +1 or -1."""
    terms: tuple[tuple[int, Expr], ...]
    prec = 1

    def tex(self):
        out: list[str] = []
        for k, (s, t) in enumerate(self.terms):
            body = _paren_tex(t, 2)
            if s < 0:
                out += ["-", *body]
            else:
                out += ([] if k == 0 else ["+"]) + body
        return out

    def py(self):
        parts = []
        for k, (s, t) in enumerate(self.terms):
            parts.append(("- " if s < 0 else ("" if k == 0 else "+ ")) + t.py())
        return "(" + " ".join(parts) + ")"

    def ev(self, env):
        return float(sum(s * t.ev(env) for s, t in self.terms))


@dataclass(frozen=True)
class Mul(Expr):
    """coef * f1 * f2 ... (coef a positive int; 1 is not written)."""
    coef: int
    factors: tuple[Expr, ...]
    prec = 2

    def tex(self):
        out = [] if self.coef == 1 else _digits(self.coef)
        for f in self.factors:
            out += _paren_tex(f, 3)
        return out

    def py(self):
        return "(" + " * ".join([str(self.coef)] + [f.py() for f in self.factors]) + ")"

    def ev(self, env):
        v = float(self.coef)
        for f in self.factors:
            v *= f.ev(env)
        return v


@dataclass(frozen=True)
class Pow(Expr):
    base: Expr
    exp: int

    def tex(self):
        return [*_paren_tex(self.base, 3), "^", "{", *_digits(self.exp), "}"]

    def py(self):
        return f"({self.base.py()})**{self.exp}"

    def ev(self, env):
        return float(self.base.ev(env) ** self.exp)


@dataclass(frozen=True)
class Func(Expr):
    """sin, cos or exp of an argument."""
    name: str
    arg: Expr

    def tex(self):
        return [f"\\{self.name}", "(", *self.arg.tex(), ")"]

    def py(self):
        return f"{self.name}({self.arg.py()})"

    def ev(self, env):
        return float(getattr(math, self.name)(self.arg.ev(env)))


@dataclass(frozen=True)
class Abs(Expr):
    arg: Expr

    def tex(self):
        return ["|", *self.arg.tex(), "|"]

    def py(self):
        return f"abs({self.arg.py()})"

    def ev(self, env):
        return abs(self.arg.ev(env))


@dataclass(frozen=True)
class Max(Expr):
    a: Expr
    b: Expr

    def tex(self):
        return ["\\max", "(", *self.a.tex(), ",", *self.b.tex(), ")"]

    def py(self):
        a, b = self.a.py(), self.b.py()
        return f"Expr_if(IF={a} >= {b}, THEN={a}, ELSE={b})"

    def ev(self, env):
        return max(self.a.ev(env), self.b.ev(env))


@dataclass(frozen=True)
class Floor(Expr):
    arg: Expr

    def tex(self):
        return ["\\lfloor", *self.arg.tex(), "\\rfloor"]

    def py(self):
        return f"floor({self.arg.py()})"

    def ev(self, env):
        return float(math.floor(self.arg.ev(env)))


@dataclass(frozen=True)
class Piece(Expr):
    """then if var <= threshold, else other: a jump at the threshold."""
    var: Expr
    threshold: int
    then: Expr
    other: Expr

    def tex(self):
        return ["\\left", "\\{", *self.then.tex(), "\\quad", "\\mathrm", "{", "i", "f", "}", "\\quad",
                *self.var.tex(), "\\leq", *Num(self.threshold).tex(), ",", "\\quad",
                *self.other.tex(), "\\quad", "\\mathrm", "{", "e", "l", "s", "e", "}", "\\right", "."]

    def py(self):
        return (f"Expr_if(IF={self.var.py()} <= {self.threshold}, THEN={self.then.py()}, "
                f"ELSE={self.other.py()})")

    def ev(self, env):
        return self.then.ev(env) if self.var.ev(env) <= self.threshold else self.other.ev(env)


@dataclass(frozen=True)
class Sum(Expr):
    """sum_{i=1}^{n} body(i)."""
    n: int
    body: Expr

    def tex(self):
        return ["\\sum", "_", "{", "i", "=", "1", "}", "^", "{", *_digits(self.n), "}",
                *_paren_tex(self.body, 2)]

    def py(self):
        return f"sum({self.body.py()} for i in range(1, {self.n + 1}))"

    def ev(self, env):
        return float(sum(self.body.ev({**env, "i": i}) for i in range(1, self.n + 1)))


@dataclass(frozen=True)
class Expect(Expr):
    """E_xi[body] for xi uniform on a few values (the sample average over them)."""
    body: Expr
    values: tuple[int, ...]

    def tex(self):
        return ["\\mathbb", "{", "E", "}", "_", "{", "\\xi", "}", "[", *self.body.tex(), "]"]

    def py(self):
        return f"sum({self.body.py()} for xi in {list(self.values)}) / {len(self.values)}"

    def ev(self, env):
        return float(sum(self.body.ev({**env, "xi": v}) for v in self.values) / len(self.values))


def minus(v: Expr, c: int) -> Expr:
    """v - c, written without a double sign."""
    if c == 0:
        return v
    return Add(((1, v), (-1, Num(c)))) if c > 0 else Add(((1, v), (1, Num(-c))))


def rminus(c: int, v: Expr) -> Expr:
    """c - v, written without a double sign."""
    return Add(((1, Num(c)), (-1, v))) if c >= 0 else Add(((-1, v), (-1, Num(-c))))


def add(*terms: Expr) -> Expr:
    return terms[0] if len(terms) == 1 else Add(tuple((1, t) for t in terms))


# --------------------------------------------------------------------------- problems
@dataclass
class Constraint:
    lhs: Expr
    sense: str  # "<=", ">=", "=="
    rhs: int
    level: str = "upper"  # "lower": a constraint of a bilevel problem's lower level

    def tex(self) -> list[str]:
        op = {"<=": "\\leq", ">=": "\\geq", "==": "="}[self.sense]
        return [*self.lhs.tex(), op, *Num(self.rhs).tex()]

    def py(self) -> str:
        return f"{self.lhs.py()} {self.sense} {self.rhs}"

    def residual(self, env) -> float:
        """lhs - rhs (the constraint holds when it is <= 0, >= 0, or == 0 by sense)."""
        return self.lhs.ev(env) - self.rhs


@dataclass
class Problem:
    ptype: str
    sense: str                           # "min" / "max"
    objectives: list[Expr]
    constraints: list[Constraint]
    dims: dict[str, int]                 # variable name -> number of components
    lo: int
    hi: int
    integer: bool
    complexities: list[str]
    n: int                               # the dimension (largest vector)
    lower_objective: Expr | None = None  # bilevel
    xi_values: tuple[int, ...] = ()
    planted: dict[str, list[int]] | None = None
    planted_value: float | None = None
    layout: str = "lines"                # "lines" (one item a line) or "inline"
    meta: dict[str, Any] = field(default_factory=dict)

    # -- LaTeX ------------------------------------------------------------------------
    def latex_lines(self) -> list[list[str]]:
        op = "\\min" if self.sense == "min" else "\\max"
        names = list(self.dims)
        head = [op, "_", "{", *_join([[v] for v in names], [","]), "}", "\\quad"]
        lines: list[list[str]] = []
        if self.ptype == "multi":
            objs = _join([o.tex() for o in self.objectives], [",", "\\quad"])
            lines.append(head + ["\\{", *objs, "\\}"])
        else:
            lines.append(head + self.objectives[0].tex())
        upper = [c for c in self.constraints if c.level == "upper"]
        if self.ptype == "bilevel":
            low = [c for c in self.constraints if c.level == "lower"]
            body = self.lower_objective.tex()
            if low:
                body = body + [":", *_join([c.tex() for c in low], [",", "\\quad"])]
            lines.append(["\\mathrm", "{", "s", ".", "t", ".", "}", "\\quad", "y", "\\in", "\\arg", "\\min", "_",
                          "{", "y", "}", "\\{", *body, "\\}"])
        for k, c in enumerate(upper):
            lead = ["\\mathrm", "{", "s", ".", "t", ".", "}", "\\quad"] if (k == 0 and self.ptype != "bilevel") else []
            lines.append(lead + c.tex())
        if self.ptype == "stochastic":
            lines.append(["\\xi", "\\sim", "\\mathcal", "{", "U", "}", "\\{",
                          *_join([Num(v).tex() for v in self.xi_values], [","]), "\\}"])
        for v, d in self.dims.items():
            if self.integer:
                dom = ["\\{", *Num(self.lo).tex(), ",", "\\ldots", ",", *Num(self.hi).tex(), "\\}"]
            else:
                dom = ["[", *Num(self.lo).tex(), ",", *Num(self.hi).tex(), "]"]
            lines.append([v, "\\in", *dom, "^", "{", *_digits(d), "}"])
        return lines

    def latex(self) -> str:
        lines = self.latex_lines()
        if self.layout == "inline":
            # everything after the objective on one line, items separated by commas
            rest = _join(lines[1:], [",", "\\quad"])
            lines = [lines[0] + ([",", "\\quad"] if rest else []) + rest]
        from ..tokenizer import detokenize

        return detokenize(_join(lines, ["\\\\"]))

    # -- Pyomo ------------------------------------------------------------------------
    def pyomo(self) -> str:
        doc = f"{self.ptype} problem; complexities: {', '.join(self.complexities) or 'linear'}."
        return pyomo_script({v: (d, self.lo, self.hi, self.integer) for v, d in self.dims.items()},
                            self.sense, self.objectives, self.constraints,
                            lower_objective=self.lower_objective, docstring=doc)

    # -- values -----------------------------------------------------------------------
    def objective_values(self, env) -> list[float]:
        vals = [o.ev(env) for o in self.objectives]
        if self.lower_objective is not None:
            vals.append(self.lower_objective.ev(env))
        return vals

    def tags(self) -> dict[str, Any]:
        return {"type": self.ptype, "sense": self.sense,
                "complexities": list(self.complexities), "n": self.n,
                "integer": self.integer, "layout": self.layout,
                "variables": dict(self.dims), "bounds": [self.lo, self.hi],
                "family": self.meta.get("family", "free"),
                "objectives": len(self.objectives) + (1 if self.lower_objective else 0),
                "constraints": len(self.constraints)}


def pyomo_script(domains: dict[str, tuple[int, int, int, bool]], sense: str, objectives: list[Expr],
                 constraints: list[Constraint], *, lower_objective: Expr | None = None,
                 lower_sense: str = "min", docstring: str | None = None) -> str:
    """A Pyomo script whose ``build_model()`` returns the model: variables name -> (n, lo, hi,
    integer) over RangeSet(1, n); ``m.obj`` (``m.obj1..k`` when there are several objectives);
    ``m.c1..`` for the upper-level constraints; a bilevel problem's lower level in the Block
    ``m.lower`` with its objective deactivated. The generator writes every sample's script with it
    (with a docstring of tags), and so does M2's rule-based translator (without one)."""
    pyo_sense = "minimize" if sense == "min" else "maximize"
    out = ["from pyomo.environ import *", "", "", "def build_model():"]
    if docstring is not None:
        out.append(f"    \"\"\"{docstring}\"\"\"")
    out.append("    m = ConcreteModel()")
    for v, (n, lo, hi, integer) in domains.items():
        out.append(f"    m.{v} = Var(RangeSet(1, {n}), domain={'Integers' if integer else 'Reals'}, bounds=({lo}, {hi}))")
    if len(objectives) > 1:
        for k, o in enumerate(objectives, 1):
            out.append(f"    m.obj{k} = Objective(expr={o.py()}, sense={pyo_sense})")
    else:
        out.append(f"    m.obj = Objective(expr={objectives[0].py()}, sense={pyo_sense})")
    k = 0
    for c in constraints:
        if c.level == "upper":
            k += 1
            out.append(f"    m.c{k} = Constraint(expr={c.py()})")
    if lower_objective is not None:
        lsense = "minimize" if lower_sense == "min" else "maximize"
        out.append("    # lower level: y minimises this for the upper level's x (solve it with x fixed)")
        out.append("    m.lower = Block()")
        out.append(f"    m.lower.obj = Objective(expr={lower_objective.py()}, sense={lsense})")
        j = 0
        for c in constraints:
            if c.level == "lower":
                j += 1
                out.append(f"    m.lower.c{j} = Constraint(expr={c.py()})")
        out.append("    m.lower.obj.deactivate()")
    out.append("    return m")
    return "\n".join(out) + "\n"


def _join(parts: list[list[str]], sep: list[str]) -> list[str]:
    out: list[str] = []
    for k, p in enumerate(parts):
        out += (sep if k else []) + p
    return out


# --------------------------------------------------------------------------- generator
def _nonneg_term(kind: str, v: Expr, c: int, rng: random.Random, comp: str) -> Expr:
    """A term >= 0 everywhere and = 0 at v = c (the planted point), of the given complexity."""
    dv = minus(v, c)
    k = rng.randint(1, 5)
    if comp == "nonlinear":
        return Mul(k, (Pow(dv, 2),)) if k > 1 else Pow(dv, 2)
    if comp == "nonconvex":     # k (1 - cos(x - c)) >= 0, zero at x = c (and at c + 2 pi m)
        one_minus_cos = Add(((1, Num(1)), (-1, Func("cos", dv))))
        return Mul(k, (one_minus_cos,)) if k > 1 else one_minus_cos
    if comp == "nondifferentiable":
        return (Abs(dv) if rng.random() < 0.5 else
                Max(Num(0), dv if rng.random() < 0.5 else rminus(c, v)))
    if comp == "discontinuous":
        if rng.random() < 0.5:
            return Floor(Pow(dv, 2))
        return Piece(v, c, Pow(dv, 2), Add(((1, Pow(dv, 2)), (1, Num(rng.randint(1, 4))))))
    return Pow(dv, 2)


def _free_term(comp: str, vs: list[Expr], rng: random.Random) -> Expr:
    """A term of the complexity, with no promise about its minimum."""
    a, b = rng.sample(vs, 2) if len(vs) > 1 else (vs[0], vs[0])
    k = rng.randint(1, 9)
    if comp == "nonlinear":
        return Mul(k, (Func("exp", a),)) if rng.random() < 0.3 else Mul(k, (Pow(a, 2),))
    if comp == "nonconvex":
        return Mul(k, (a, b)) if a != b and rng.random() < 0.5 else Mul(k, (Func("sin", a),))
    if comp == "nondifferentiable":
        return Abs(Add(((1, a), (-1, b)))) if a != b else Abs(a)
    if comp == "discontinuous":
        return Floor(a) if rng.random() < 0.5 else Piece(a, rng.randint(-2, 2), Mul(k, (a,)), Num(rng.randint(1, 9)))
    return Mul(k, (a,))


def _linear(vs: list[Expr], rng: random.Random, k_terms: int) -> tuple[Expr, dict[Expr, int]]:
    chosen = rng.sample(vs, min(k_terms, len(vs)))
    coefs = {v: rng.choice([-1, 1]) * rng.randint(1, 9) for v in chosen}
    terms = tuple((1 if c > 0 else -1, Mul(abs(c), (v,)) if abs(c) != 1 else v) for v, c in coefs.items())
    if terms[0][0] < 0:   # a leading minus is written "- 3 x_{1}": fine, keep it
        pass
    return Add(terms) if len(terms) > 1 else (terms[0][1] if terms[0][0] > 0 else Add(terms)), coefs


def generate(seed: int, *, type_weights: dict[str, float], complexity_rate: float,
             n_choices: list[int], max_explicit: int = 3, lp_share: float = 0.35,
             inline_share: float = 0.25) -> Problem:
    """One random formulation, reproducible from ``seed`` alone."""
    rng = random.Random(seed)
    ptype = rng.choices(list(type_weights), weights=list(type_weights.values()))[0]
    family = "lp" if (ptype in ("single", "stochastic") and rng.random() < lp_share) else "planted"
    if ptype in ("multi", "bilevel"):
        family = "free" if rng.random() < 0.5 else "planted"
    comps = [c for c in COMPLEXITIES if rng.random() < complexity_rate]
    if family == "lp":
        comps = [c for c in comps if c in ("integer", "high_dim")]
    elif not any(c in comps for c in ("nonlinear", "nonconvex", "nondifferentiable", "discontinuous")):
        comps.append(rng.choice(["nonlinear", "nonconvex", "nondifferentiable", "discontinuous"]))
    comps = [c for c in COMPLEXITIES if c in comps]
    high = "high_dim" in comps
    n = rng.choice(n_choices) if high else rng.randint(2, max_explicit)
    integer = "integer" in comps
    lo, hi = -rng.randint(2, 10), rng.randint(2, 10)
    dims = {"x": n}
    if ptype == "bilevel":
        dims["y"] = rng.randint(1, 2)
    xs = [Var("x", i) for i in range(1, min(n, max_explicit) + 1)]
    ys = [Var("y", j) for j in range(1, dims.get("y", 0) + 1)]
    shape_comps = [c for c in comps if c in ("nonlinear", "nonconvex", "nondifferentiable",
                                             "discontinuous")]
    sense = "min" if rng.random() < 0.75 else "max"
    meta = {"family": family}
    layout = "inline" if rng.random() < inline_share else "lines"

    if family == "lp":
        obj, _ = _linear(xs, rng, rng.randint(2, 3))
        if high:
            obj = Add(((1, obj), (1, Sum(n, Mul(1, (Idx(), IVar("x"))) if rng.random() < 0.5 else IVar("x")))))
        x0 = {"x": {i: rng.randint(lo, hi) for i in range(1, n + 1)}}
        cons = []
        for _ in range(rng.randint(1, 3)):
            lhs, _c = _linear(xs, rng, rng.randint(2, 3))
            if high and rng.random() < 0.5:
                lhs = Add(((1, lhs), (1, Sum(n, IVar("x")))))
            val = lhs.ev(x0)
            cons.append(Constraint(lhs, "<=", int(math.ceil(val)) + rng.randint(0, 5)))
        xi_values: tuple[int, ...] = ()
        if ptype == "stochastic":      # E[xi * linear] = mean(xi) * linear: still an LP
            xi_values = tuple(sorted(rng.sample(range(1, 10), rng.randint(2, 4))))
            obj = Expect(Mul(1, (Xi(), obj)), xi_values)
        return Problem(ptype, sense, [obj], cons, dims, lo, hi, integer, comps, n,
                       xi_values=xi_values, layout=layout, meta=meta)

    # planted (or free, for multi / bilevel)
    c_all = rng.randint(max(lo, -3), min(hi, 3))
    cvec = {"x": {i: (c_all if high else rng.randint(max(lo, -3), min(hi, 3))) for i in range(1, n + 1)},
            "y": {j: rng.randint(max(lo, -3), min(hi, 3)) for j in range(1, dims.get("y", 0) + 1)}}

    def planted_objective(vars_: list[Expr], with_sum: bool) -> tuple[Expr, int]:
        terms: list[Expr] = []
        for comp in shape_comps:
            v = rng.choice(vars_)
            terms.append(_nonneg_term("", v, cvec[v.name][v.index], rng, comp))
        if with_sum:
            body = Pow(minus(IVar("x"), c_all), 2)
            terms.append(Sum(n, body))
        offset = rng.randint(-9, 9)
        expr = add(*terms)
        if offset:
            expr = Add(tuple((1, t) for t in terms) + ((1 if offset > 0 else -1, Num(abs(offset))),))
        return expr, offset

    def free_objective(vars_: list[Expr]) -> Expr:
        lin, _ = _linear(vars_, rng, 2)
        return add(lin, *[_free_term(comp, vars_, rng) for comp in shape_comps])

    xi_values = ()
    lower = None
    planted = family == "planted"
    if ptype == "multi":
        k = rng.randint(2, 3)
        objs = [planted_objective(xs, high and j == 0)[0] if planted else free_objective(xs)
                for j in range(k)]
        value = None
    elif ptype == "bilevel":
        if planted:
            upper, off = planted_objective(xs + ys, high)
        else:
            upper, off = free_objective(xs + ys), None
        objs = [upper]
        # lower level: y tracks a linear function of x (its optimum depends on x)
        lower = add(*[Pow(Add(((1, y), (-1, rng.choice(xs)))), 2) for y in ys])
        value = None
    elif ptype == "stochastic":
        xi_values = tuple(sorted(rng.sample(range(1, 10), rng.randint(2, 4))))
        base, off = planted_objective(xs, high)
        # xi > 0 scales the non-negative part: E[xi * (terms)] + offset, still zero at c
        parts = base.terms if isinstance(base, Add) else ((1, base),)
        shape = [t for s, t in parts if not isinstance(t, Num)]
        const = [(s, t) for s, t in parts if isinstance(t, Num)]
        body = Mul(1, (Xi(), add(*shape)))
        objs = [Add(((1, Expect(body, xi_values)), *const)) if const else Expect(body, xi_values)]
        value = float(off)
    else:
        obj, off = planted_objective(xs, high)
        objs = [obj]
        value = float(off)
    if sense == "max":
        objs = [Add(((-1, o),)) if not isinstance(o, Add) else Add(tuple((-s, t) for s, t in o.terms))
                for o in objs]
        value = -value if value is not None else None

    env_c = {"x": cvec["x"], "y": cvec["y"]}
    cons = []
    for _ in range(rng.randint(0, 2)):
        vars_ = xs + ys
        lhs, _ = _linear(vars_, rng, min(2, len(vars_)))
        if shape_comps and rng.random() < 0.4:
            lhs = add(lhs, _free_term(rng.choice(shape_comps), vars_, rng))
        val = lhs.ev(env_c)
        if rng.random() < 0.5:
            cons.append(Constraint(lhs, "<=", int(math.ceil(val)) + rng.randint(0, 4)))
        else:
            cons.append(Constraint(lhs, ">=", int(math.floor(val)) - rng.randint(0, 4)))
    if ptype == "bilevel" and rng.random() < 0.6:
        y = rng.choice(ys)
        val = y.ev(env_c)
        cons.append(Constraint(y, "<=", int(math.ceil(val)) + rng.randint(0, 3), level="lower"))
    return Problem(ptype, sense, objs, cons, dims, lo, hi, integer, comps, n,
                   lower_objective=lower, xi_values=xi_values,
                   planted={k: [v[i] for i in sorted(v)] for k, v in env_c.items() if v} if planted else None,
                   planted_value=value if (planted and ptype in ("single", "stochastic")) else None,
                   layout=layout, meta=meta)


# --------------------------------------------------------------------------- models and optima
def build_model(script: str):
    """Run a generator-written Pyomo script (trusted: this module wrote it) and build its model.

    Scripts from a learned model (M2's seq2seq translator) must not come through here: they belong in a
    sandboxed subprocess."""
    ns: dict[str, Any] = {}
    exec(compile(script, "<autoopt-script>", "exec"), ns)  # noqa: S102 - our own generator's text
    return ns["build_model"]()


def solve_linear(script: str, time_limit: float = 10.0) -> float | None:
    """The optimum of an LP/MILP script, solved with HiGHS through Pyomo; None if not optimal."""
    from pyomo.contrib.appsi.solvers import Highs
    from pyomo.contrib.appsi.base import TerminationCondition

    m = build_model(script)
    opt = Highs()
    opt.config.time_limit = time_limit
    opt.config.load_solution = False
    res = opt.solve(m)
    if res.termination_condition != TerminationCondition.optimal:
        return None
    return float(res.best_feasible_objective)


def random_point(problem: Problem, rng: random.Random) -> dict[str, dict[int, float]]:
    """A point of the box (integers for integer problems)."""
    env = {}
    for v, d in problem.dims.items():
        if problem.integer:
            env[v] = {i: float(rng.randint(problem.lo, problem.hi)) for i in range(1, d + 1)}
        else:
            env[v] = {i: rng.uniform(problem.lo, problem.hi) for i in range(1, d + 1)}
    return env


def pyomo_values(model, env) -> tuple[list[float], list[float]]:
    """Objective values (upper, then lower level) and constraint residuals (body - bound) of a
    built model at ``env``, in the order the script declares them."""
    import pyomo.environ as pe

    for v in model.component_objects(pe.Var, descend_into=True):
        for i in v:
            v[i].set_value(env[v.local_name][i], skip_validation=True)
    objs = [pe.value(o.expr) for o in model.component_data_objects(pe.Objective, descend_into=True)]
    res = []
    for c in model.component_data_objects(pe.Constraint, descend_into=True):
        bound = c.upper if c.upper is not None else c.lower
        res.append(pe.value(c.body) - pe.value(bound))
    return objs, res


def tree_values(problem: Problem, env) -> tuple[list[float], list[float]]:
    """The same figures from the generator's expression tree."""
    upper = [c for c in problem.constraints if c.level == "upper"]
    lower = [c for c in problem.constraints if c.level == "lower"]
    return problem.objective_values(env), [c.residual(env) for c in upper + lower]
