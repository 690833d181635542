"""M2, rule-based: LaTeX of a formulation -> a Pyomo script, through a real parser.

The paper's M2 is a fine-tuned code LLM (DeepSeek-Coder-1.3B); it publishes no rule-based
translator. This one is ours: it covers the formulation language the study's generator writes
(:mod:`stages.autoopt.data.grammar`, ``Problem.latex``) and nothing more:

* a lark grammar, LALR(1) (30x faster than lark's Earley on the same grammar, same trees:
  benchmarks/autoopt/m2_sandbox.py). The LaTeX is split into the tokenizer's tokens first, digit
  runs merged into numbers, and each ``|`` told apart as an opening ``\\lvert`` or a closing
  ``\\rvert`` (it closes the innermost open bar when an operand has just ended), which keeps the
  grammar LALR(1). It reads the objective head ``\\min_{x,y} \\quad ...`` (``\\{f_1, \\quad f_2\\}``
  for several objectives), ``\\mathrm{s.t.}`` items, a bilevel lower level
  ``y \\in \\arg\\min_{y} \\{ f : g_1, \\quad g_2 \\}``, ``\\mathbb{E}_{\\xi}[...]`` with
  ``\\xi \\sim \\mathcal{U}\\{...\\}``, domains ``x \\in [lo, hi]^{n}`` / ``\\{lo, \\ldots, hi\\}^{n}``,
  items on separate lines (``\\\\``) or inline (``, \\quad``);
* expressions: ``+ -``, implicit products with an integer coefficient, ``^{k}``, ``\\sum_{i=1}^{n}``
  (its body is the product that follows), ``|..|``, ``\\max(a, b)``, ``\\lfloor..\\rfloor``,
  ``\\sin \\cos \\exp``, the piecewise ``\\left\\{ A \\quad \\mathrm{if} \\quad v \\leq c, \\quad B
  \\quad \\mathrm{else} \\right.``;
* the parse tree becomes the generator's own expression nodes (:mod:`grammar`'s ``Expr``
  classes: their ``py()`` writes the Pyomo), and the script has the shape of
  ``Problem.pyomo()`` minus its docstring line (which holds tags the LaTeX does not show).

Anything else (M1's predictions are often broken) raises :class:`TranslationError` quickly: the
input is capped at ``MAX_TOKENS`` tokens, the LALR parse is linear in them, and nesting too deep
for Python's recursion limit is an error too, so nothing hangs.

Implicit products are ambiguous in LaTeX where the generator's are not: ``\\sin(x_{1})`` after a
coefficient 1 the generator does not write reads back as ``sin(m.x[1])``, not ``(1 * sin(...))``
(same value, other text: 8 of the 200 printed test scripts of the default dataset differ from
the reference that way, and none otherwise).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ..data import grammar as g
from ..tokenizer import tokenize

MAX_TOKENS = 1500

GRAMMAR = r"""
start: objective (_sep item)*
_sep: "\\\\" | "," "\\quad"

objective: sense "_" "{" varlist "}" "\\quad" objbody
sense: "\\min" -> min_
     | "\\max" -> max_
varlist: vname ("," vname)*
vname: "x" -> x_
     | "y" -> y_
objbody: "\\{" expr ("," "\\quad" expr)* "\\}" -> multi
       | expr                                     -> single

?item: st? constraint   -> upper
     | st? lower_level      -> lower
     | xi_dist
     | domain
st: "\\mathrm" "{" "s" "." "t" "." "}" "\\quad"
lower_level: vname "\\in" "\\arg" sense "_" "{" varlist "}" "\\{" expr (":" constraint ("," "\\quad" constraint)*)? "\\}"
constraint: expr rel expr
rel: "\\leq" -> le
   | "\\geq" -> ge
   | "="     -> eq
xi_dist: "\\xi" "\\sim" "\\mathcal" "{" "U" "}" "\\{" signed ("," signed)* "\\}"
domain: vname "\\in" "[" signed "," signed "]" "^" "{" NUMBER "}"                   -> real_box
      | vname "\\in" "\\{" signed "," "\\ldots" "," signed "\\}" "^" "{" NUMBER "}"  -> int_box
signed: NUMBER       -> pos
      | "-" NUMBER   -> neg

expr: head_term (addop term)*
head_term: term        -> plus_term
         | "-" term    -> minus_term
addop: "+" -> plus
     | "-" -> minus
?term: NUMBER                        -> num
     | NUMBER? factor* last_factor   -> product
?last_factor: factor | sum_
sum_: "\\sum" "_" "{" "i" "=" NUMBER "}" "^" "{" NUMBER "}" term
factor: atom ("^" "{" NUMBER "}")?
?atom: vname "_" "{" NUMBER "}"  -> var
     | vname "_" "{" "i" "}"     -> ivar
     | "i"                       -> idx
     | "\\xi"                    -> xi
     | "(" expr ")"              -> paren
     | func "(" expr ")"         -> call
     | "\\lvert" expr "\\rvert"   -> abs_
     | "\\max" "(" expr "," expr ")"  -> max2
     | "\\lfloor" expr "\\rfloor"     -> floor_
     | "\\left" "\\{" expr "\\quad" "\\mathrm" "{" "i" "f" "}" "\\quad" expr "\\leq" signed "," "\\quad" expr "\\quad" "\\mathrm" "{" "e" "l" "s" "e" "}" "\\right" "."  -> piece
     | "\\mathbb" "{" "E" "}" "_" "{" "\\xi" "}" "[" expr "]"  -> expect
func: "\\sin" -> sin | "\\cos" -> cos | "\\exp" -> exp

NUMBER: /[0-9]+/
%ignore " "
"""


class TranslationError(ValueError):
    """The LaTeX is not a formulation this translator can read (the message says where)."""


@lru_cache(maxsize=1)
def parser():
    from lark import Lark

    return Lark(GRAMMAR, parser="lalr", lexer="contextual")


def prepare_latex(latex: str) -> str:
    """Tokens (the tokenizer's), adjacent digit tokens merged into one number, space-joined."""
    if not isinstance(latex, str):
        raise TranslationError(f"LaTeX must be a str, got {type(latex).__name__}")
    try:
        toks = tokenize(latex)
    except ValueError as err:
        raise TranslationError(str(err)) from None
    if not toks:
        raise TranslationError("empty LaTeX")
    if len(toks) > MAX_TOKENS:
        raise TranslationError(f"{len(toks)} tokens (more than {MAX_TOKENS})")
    out: list[str] = []
    open_bars = 0
    for t in toks:
        if t.isdigit() and out and out[-1].isdigit():
            out[-1] += t
        elif t == "|":
            # |..| uses one symbol for both sides: a bar closes the innermost open one when an
            # operand has just ended (a number, a variable, a closing bracket), else it opens
            if open_bars and out and (out[-1].isdigit() or out[-1] in _OPERAND_ENDS):
                out.append("\\rvert")
                open_bars -= 1
            else:
                out.append("\\lvert")
                open_bars += 1
        else:
            out.append(t)
    return " ".join(out)


_OPERAND_ENDS = {"i", ")", "}", "]", "\\rvert", "\\rfloor", "\\xi", "."}


# --------------------------------------------------------------------------- parse tree -> model
@dataclass
class Formulation:
    """What the LaTeX says, as the generator's expression nodes."""
    sense: str
    objectives: list[g.Expr]
    constraints: list[g.Constraint]               # level "upper" / "lower", in reading order
    domains: dict[str, tuple[int, int, int, bool]] = field(default_factory=dict)  # name -> (n, lo, hi, integer)
    lower_objective: g.Expr | None = None
    lower_sense: str = "min"
    xi_values: tuple[int, ...] = ()


def _num(tok) -> int:
    return int(str(tok))


class Builder:
    """lark Tree -> Formulation (a plain recursive walk, so the error messages can be ours)."""

    def __init__(self, xi_values: tuple[int, ...]):
        self.xi_values = xi_values

    def signed(self, t) -> int:
        return _num(t.children[0]) * (-1 if t.data == "neg" else 1)

    def vname(self, t) -> str:
        return {"x_": "x", "y_": "y"}[t.data]

    def expr(self, t) -> g.Expr:
        head, *rest = t.children
        terms = [(-1 if head.data == "minus_term" else 1, self.term(head.children[0]))]
        for op, term in zip(rest[0::2], rest[1::2]):
            terms.append((-1 if op.data == "minus" else 1, self.term(term)))
        if len(terms) == 1 and terms[0][0] == 1:
            return terms[0][1]
        return g.Add(tuple(terms))

    def term(self, t) -> g.Expr:
        from lark import Token

        if isinstance(t, Token):          # a bare NUMBER
            return g.Num(_num(t))
        if t.data == "num":
            return g.Num(_num(t.children[0]))
        if t.data == "product":
            kids = list(t.children)
            coef = None
            if kids and isinstance(kids[0], Token):
                coef = _num(kids.pop(0))
            factors = tuple(self.factor(k) for k in kids)
            if coef is None and len(factors) == 1:
                return factors[0]
            if coef == 0:
                raise TranslationError("a zero coefficient")
            return g.Mul(coef if coef is not None else 1, factors)
        return self.factor(t)

    def factor(self, t) -> g.Expr:
        if t.data == "sum_":
            start, n, body = t.children
            if _num(start) != 1:
                raise TranslationError(f"only sums from i = 1 are read, got i = {start}")
            return g.Sum(_num(n), self.term(body))
        if t.data == "factor":
            base = self.atom(t.children[0])
            return g.Pow(base, _num(t.children[1])) if len(t.children) > 1 else base
        return self.atom(t)

    def atom(self, t) -> g.Expr:
        d, c = t.data, t.children
        if d == "var":
            idx = _num(c[1])
            if idx < 1:
                raise TranslationError(f"index {idx} of {self.vname(c[0])} (indices start at 1)")
            return g.Var(self.vname(c[0]), idx)
        if d == "ivar":
            return g.IVar(self.vname(c[0]))
        if d == "idx":
            return g.Idx()
        if d == "xi":
            return g.Xi()
        if d == "paren":
            return self.expr(c[0])
        if d == "call":
            return g.Func(c[0].data, self.expr(c[1]))
        if d == "abs_":
            return g.Abs(self.expr(c[0]))
        if d == "max2":
            return g.Max(self.expr(c[0]), self.expr(c[1]))
        if d == "floor_":
            return g.Floor(self.expr(c[0]))
        if d == "piece":
            return g.Piece(self.expr(c[1]), self.signed(c[2]), self.expr(c[0]), self.expr(c[3]))
        if d == "expect":
            if not self.xi_values:
                raise TranslationError(r"\mathbb{E}_{\xi} without a \xi \sim \mathcal{U}\{...\} line")
            return g.Expect(self.expr(c[0]), self.xi_values)
        if d == "factor":
            return self.factor(t)
        raise TranslationError(f"unexpected node {d}")  # pragma: no cover - the grammar's nodes are all above

    def constraint(self, t, level: str) -> g.Constraint:
        lhs, rel, rhs = t.children
        sense = {"le": "<=", "ge": ">=", "eq": "=="}[rel.data]
        rhs_e = self.expr(rhs)
        if isinstance(rhs_e, g.Num):
            return g.Constraint(self.expr(lhs), sense, rhs_e.value, level=level)
        if isinstance(rhs_e, g.Add) and len(rhs_e.terms) == 1 and isinstance(rhs_e.terms[0][1], g.Num):
            s, n = rhs_e.terms[0]
            return g.Constraint(self.expr(lhs), sense, s * n.value, level=level)
        # an expression on the right: lhs - rhs (sense) 0
        return g.Constraint(g.Add(((1, self.expr(lhs)), (-1, rhs_e))), sense, 0, level=level)


def _walk_vars(e: g.Expr, out: dict[str, set]) -> None:
    if isinstance(e, g.Var):
        out.setdefault(e.name, set()).add(e.index)
    elif isinstance(e, g.IVar):
        out.setdefault(e.name, set()).add("i")
    for v in vars(e).values() if hasattr(e, "__dict__") else ():
        if isinstance(v, g.Expr):
            _walk_vars(v, out)
        elif isinstance(v, tuple):
            for item in v:
                if isinstance(item, g.Expr):
                    _walk_vars(item, out)
                elif isinstance(item, tuple):
                    for x in item:
                        if isinstance(x, g.Expr):
                            _walk_vars(x, out)


def _sums(e: g.Expr, n_of: list[tuple[int, g.Expr]]) -> None:
    if isinstance(e, g.Sum):
        n_of.append((e.n, e.body))
    for v in vars(e).values() if hasattr(e, "__dict__") else ():
        items = v if isinstance(v, tuple) else (v,)
        for item in items:
            for x in (item if isinstance(item, tuple) else (item,)):
                if isinstance(x, g.Expr):
                    _sums(x, n_of)


def parse(latex: str) -> Formulation:
    """The formulation the LaTeX states; :class:`TranslationError` when it cannot be read."""
    from lark.exceptions import LarkError

    text = prepare_latex(latex)
    try:
        tree = parser().parse(text)
    except LarkError as err:
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise TranslationError(f"cannot parse: {msg}") from None
    except RecursionError:
        raise TranslationError("cannot parse: nested too deeply") from None
    xi_nodes = [t for t in tree.children if getattr(t, "data", None) == "xi_dist"]
    if len(xi_nodes) > 1:
        raise TranslationError(r"more than one \xi \sim line")
    b = Builder(())
    if xi_nodes:
        b.xi_values = tuple(b.signed(s) for s in xi_nodes[0].children)
    try:
        return formulation_of(tree, b)
    except RecursionError:
        raise TranslationError("cannot parse: nested too deeply") from None


def formulation_of(tree, b: Builder) -> Formulation:
    obj, *items = tree.children
    sense_node, varlist, body = obj.children
    head_vars = [b.vname(v) for v in varlist.children]
    if len(set(head_vars)) != len(head_vars):
        raise TranslationError(f"a variable listed twice under the objective: {head_vars}")
    objectives = [b.expr(e) for e in body.children]
    f = Formulation("min" if sense_node.data == "min_" else "max", objectives, [])
    for it in items:
        if it.data == "upper":
            f.constraints.append(b.constraint(it.children[-1], "upper"))
        elif it.data == "lower":
            if f.lower_objective is not None:
                raise TranslationError("more than one lower level")
            name, lsense, lvars, lobj, *lcons = it.children[-1].children
            if [b.vname(v) for v in lvars.children] != [b.vname(name)]:
                raise TranslationError("the lower level must be y \\in \\arg\\min_{y} with the same variable")
            f.lower_sense = "min" if lsense.data == "min_" else "max"
            f.lower_objective = b.expr(lobj)
            f.constraints += [b.constraint(c, "lower") for c in lcons]
        elif it.data in ("real_box", "int_box"):
            name = b.vname(it.children[0])
            lo, hi, n = b.signed(it.children[1]), b.signed(it.children[2]), _num(it.children[3])
            if name in f.domains:
                raise TranslationError(f"two domains for {name}")
            if lo > hi:
                raise TranslationError(f"{name}: lower bound {lo} above upper bound {hi}")
            if n < 1:
                raise TranslationError(f"{name}: dimension {n} < 1")
            f.domains[name] = (n, lo, hi, it.data == "int_box")
        # xi_dist: read before the walk
    used: dict[str, set] = {}
    exprs = f.objectives + [c.lhs for c in f.constraints] + ([f.lower_objective] if f.lower_objective else [])
    for e in exprs:
        _walk_vars(e, used)
    for name in set(used) | set(head_vars):
        if name not in f.domains:
            raise TranslationError(f"variable {name} has no domain line")
    for name, idx in used.items():
        n = f.domains[name][0]
        bad = sorted(i for i in idx if i != "i" and i > n)
        if bad:
            raise TranslationError(f"{name}_{{{bad[0]}}} beyond its dimension {n}")
    sums: list[tuple[int, g.Expr]] = []
    for e in exprs:
        _sums(e, sums)
    for n, body in sums:
        inner: dict[str, set] = {}
        _walk_vars(body, inner)
        for name, idx in inner.items():
            if "i" in idx and n > f.domains[name][0]:
                raise TranslationError(f"a sum to {n} over {name}_{{i}} of dimension {f.domains[name][0]}")
    return f


# --------------------------------------------------------------------------- Pyomo
def emit(f: Formulation) -> str:
    """The Pyomo script, written as the generator writes its samples' scripts
    (``grammar.pyomo_script``), without the docstring line."""
    return g.pyomo_script(f.domains, f.sense, f.objectives, f.constraints,
                          lower_objective=f.lower_objective, lower_sense=f.lower_sense)


def translate(latex: str) -> str:
    """LaTeX -> Pyomo script; :class:`TranslationError` when the LaTeX cannot be read."""
    f = parse(latex)
    try:
        return emit(f)
    except RecursionError:
        raise TranslationError("cannot write: nested too deeply") from None


def translate_many(latex_list: list[str]) -> list[tuple[str, str]]:
    """(script, "") per LaTeX string, or ("", error message) when it cannot be translated."""
    out = []
    for s in latex_list:
        try:
            out.append((translate(s), ""))
        except TranslationError as err:
            out.append(("", str(err)))
    return out
