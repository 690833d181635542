"""Pyomo expressions -> casadi, so IPOPT (bundled with casadi) can solve a Pyomo model.

:func:`to_casadi` walks a Pyomo expression tree (sums, linear and monomial terms, products,
division, powers, negation, sin/cos/tan/exp/log/sqrt/..., abs, floor/ceil, min/max,
``Expr_if`` with (in)equalities, params and constants, variables, named expressions) and
rebuilds it with casadi ``SX`` operations. Variables map to casadi symbols chosen by the caller,
so a subset of them can be *parameters* (fixed values of an upper level; see bobd.py).

:class:`CasadiModel` is a single-objective Pyomo model flattened for casadi: the variable
vector split into the free part ``x`` and the parameter part ``p``, the objective as a
minimisation (a ``maximize`` objective is negated; :meth:`CasadiModel.user_value` turns it back),
constraints ``lbg <= g(x, p) <= ubg``, bounds, integrality, and compiled casadi Functions for
numeric evaluation, batched with ``Function.map`` (used by the GA, so one batch = one call).

What we chose: the ``floor``/``ceil``/``Expr_if``/``abs`` derivatives are casadi's (0 away
from the jumps, a sign at abs's kink), which is what IPOPT sees on such terms; variables of a
``lower`` block's objective are not treated here (bobd.py builds the two levels).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

_UNARY = {"sin": ca.sin, "cos": ca.cos, "tan": ca.tan, "exp": ca.exp, "log": ca.log,
          "log10": ca.log10, "sqrt": ca.sqrt, "asin": ca.asin, "acos": ca.acos, "atan": ca.atan,
          "sinh": ca.sinh, "cosh": ca.cosh, "tanh": ca.tanh, "floor": ca.floor, "ceil": ca.ceil,
          "abs": ca.fabs}


class ConversionError(ValueError):
    """A Pyomo expression node the converter does not know."""


def to_casadi(expr: Any, symbol: dict[int, Any]):
    """The casadi expression of a Pyomo expression; ``symbol`` maps ``id(VarData)`` to a casadi
    expression (a symbol or a number). Variables not in ``symbol`` are an error unless fixed
    (then their value is used)."""
    from pyomo.core.base.param import ParamData
    from pyomo.core.base.var import VarData
    from pyomo.core.expr import numeric_expr as ne
    from pyomo.core.expr import relational_expr as rel

    memo: dict[int, Any] = {}

    def walk(e):
        if isinstance(e, (int, float, np.integer, np.floating)):
            return float(e)
        key = id(e)
        if key in memo:
            return memo[key]
        out = node(e)
        memo[key] = out
        return out

    def node(e):
        if isinstance(e, VarData):
            if id(e) in symbol:
                return symbol[id(e)]
            if e.fixed:
                return float(e.value)
            raise ConversionError(f"variable {e.name} has no casadi symbol and is not fixed")
        if isinstance(e, ParamData):
            return float(e.value)
        if not hasattr(e, "is_expression_type"):
            raise ConversionError(f"unsupported node {type(e).__name__}")
        if e.is_named_expression_type():
            return walk(e.expr)
        if not e.is_expression_type():        # a constant-like component (e.g. a Param)
            return float(e())
        a = e.args
        if isinstance(e, (ne.SumExpression, ne.LinearExpression, ne.NPV_SumExpression)):
            total = 0.0
            for t in a:
                total = total + walk(t)
            return total
        if isinstance(e, (ne.MonomialTermExpression, ne.ProductExpression)):
            return walk(a[0]) * walk(a[1])
        if isinstance(e, ne.DivisionExpression):
            return walk(a[0]) / walk(a[1])
        if isinstance(e, ne.PowExpression):
            base, ex = walk(a[0]), walk(a[1])
            if isinstance(ex, float) and ex == int(ex) and abs(ex) <= 16:
                return ca.constpow(base, ex) if not isinstance(base, float) else base ** ex
            return base ** ex
        if isinstance(e, ne.NegationExpression):
            return -walk(a[0])
        if isinstance(e, ne.AbsExpression):
            return ca.fabs(walk(a[0]))
        if isinstance(e, ne.UnaryFunctionExpression):
            fn = _UNARY.get(e.getname())
            if fn is None:
                raise ConversionError(f"unsupported function {e.getname()!r}")
            v = walk(a[0])
            return float(fn(v)) if isinstance(v, float) else fn(v)
        if isinstance(e, ne.MaxExpression):
            out = walk(a[0])
            for t in a[1:]:
                out = ca.fmax(out, walk(t))
            return out
        if isinstance(e, ne.MinExpression):
            out = walk(a[0])
            for t in a[1:]:
                out = ca.fmin(out, walk(t))
            return out
        if isinstance(e, ne.Expr_ifExpression):
            cond, then, other = (walk(t) for t in a)
            return ca.if_else(cond, then, other)
        if isinstance(e, rel.InequalityExpression):
            lhs, rhs = walk(a[0]), walk(a[1])
            return (lhs < rhs) if e.strict else (lhs <= rhs)
        if isinstance(e, rel.EqualityExpression):
            return walk(a[0]) == walk(a[1])
        if isinstance(e, rel.RangedExpression):
            lo, mid, hi = (walk(t) for t in a)
            return ca.logic_and(lo <= mid, mid <= hi)
        raise ConversionError(f"unsupported expression node {type(e).__name__}")

    return walk(expr)


def model_vars(model) -> list:
    """The model's variables (VarData) in declaration order, those of deactivated blocks too."""
    import pyomo.environ as pe

    return [v for v in model.component_data_objects(pe.Var, descend_into=True, active=None)]


@dataclass
class CasadiModel:
    """A single-objective Pyomo model as casadi: min f(x, p) s.t. lbg <= g(x, p) <= ubg."""
    names: list[str]                    # every variable, in order (free then parameter)
    free: list[int]                     # indices (into names) of x
    params: list[int]                   # indices of p
    lb: np.ndarray                      # bounds of every variable
    ub: np.ndarray
    integer: np.ndarray                 # bool per variable
    sign: float                         # +1 min, -1 max: f = sign * objective
    x: Any                              # casadi SX symbols
    p: Any
    f: Any                              # casadi SX, minimised
    g: Any                              # casadi SX vector
    lbg: np.ndarray
    ubg: np.ndarray
    _fun: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.names)

    def function(self, batch: int = 1):
        """casadi Function (x, p) -> (f, g); batched over ``batch`` columns when > 1."""
        if batch not in self._fun:
            base = self._fun.get(1)
            if base is None:
                base = ca.Function("fg", [self.x, self.p], [self.f, self.g])
                self._fun[1] = base
            if batch > 1:
                self._fun[batch] = base.map(batch)
        return self._fun[batch]

    def evaluate(self, X: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """f (k,) and g (k, m) at k points: rows of X (k, nx) and P (k, np)."""
        X = np.atleast_2d(np.asarray(X, float))
        P = np.atleast_2d(np.asarray(P, float))
        k = X.shape[0]
        if P.shape[0] == 1 and k > 1:
            P = np.repeat(P, k, axis=0)
        fn = self.function(k)
        f, g = fn(X.T, P.T)
        return np.asarray(f, float).reshape(k), np.asarray(g, float).reshape(-1, k).T

    def violation(self, g: np.ndarray) -> np.ndarray:
        """Largest constraint violation of each row of g (0 when none)."""
        g = np.atleast_2d(g)
        if g.shape[1] == 0:
            return np.zeros(g.shape[0])
        v = np.maximum(self.lbg - g, g - self.ubg)
        return np.maximum(v.max(axis=1), 0.0)

    def user_value(self, f: float) -> float:
        """The objective as the model states it (max problems un-negated)."""
        return float(self.sign * f)


def build_casadi(model, objective=None, constraints=None, param_vars: list | None = None) -> CasadiModel:
    """Flatten a Pyomo model: its (first active, or given) objective and its (active, or given)
    constraints, with ``param_vars`` (VarData) as casadi parameters and the rest free."""
    import pyomo.environ as pe

    allv = model_vars(model)
    if objective is None:
        objs = list(model.component_data_objects(pe.Objective, active=True, descend_into=True))
        if not objs:
            raise ConversionError("the model has no active objective")
        objective = objs[0]
    if constraints is None:
        constraints = list(model.component_data_objects(pe.Constraint, active=True, descend_into=True))
    pid = {id(v) for v in (param_vars or [])}
    free = [i for i, v in enumerate(allv) if id(v) not in pid]
    params = [i for i, v in enumerate(allv) if id(v) in pid]
    x = ca.SX.sym("x", len(free))
    p = ca.SX.sym("p", len(params))
    symbol = {id(allv[i]): x[k] for k, i in enumerate(free)}
    symbol.update({id(allv[i]): p[k] for k, i in enumerate(params)})
    sign = 1.0 if objective.sense == pe.minimize else -1.0
    f = sign * _sx(to_casadi(objective.expr, symbol))
    gs, lo, hi = [], [], []
    for c in constraints:
        gs.append(_sx(to_casadi(c.body, symbol)))
        lo.append(-np.inf if c.lower is None else float(pe.value(c.lower)))
        hi.append(np.inf if c.upper is None else float(pe.value(c.upper)))
    lb = np.array([-np.inf if v.lb is None else float(v.lb) for v in allv])
    ub = np.array([np.inf if v.ub is None else float(v.ub) for v in allv])
    integer = np.array([bool(v.is_integer() or v.is_binary()) for v in allv])
    return CasadiModel([v.name for v in allv], free, params, lb, ub, integer, sign, x, p, f,
                       ca.vertcat(*gs) if gs else ca.SX(0, 1), np.array(lo), np.array(hi))


def _sx(v):
    return ca.SX(v) if isinstance(v, float) else v
