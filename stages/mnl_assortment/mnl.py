"""The linear MNL choice model: assortments, revenues (in log space), likelihood, MLE, widths.

Model. Round t offers an assortment S (at most K of the N items on show). Item i has features
x_i in R^d (||x_i|| <= 1) and revenue r_i; its utility is u_i = x_i' theta. The customer buys
i in S with probability exp(u_i) / (1 + sum_{j in S} exp(u_j)) and nothing with 1 / (1 + ...).
The expected revenue of S is R(S, u) = sum_{i in S} r_i exp(u_i) / (1 + sum_{j in S} exp(u_j)).

Everything that exponentiates utilities works in log space (log-sum-exp): the baseline's
optimistic utilities reach 1e4 and more, where exp overflows.

Assortments are held as an (M, K) array of item indices padded with N, the index of a dummy
item whose utility is -inf (it is never bought and adds nothing).
"""
from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

NO_PURCHASE = -1
SPREAD_FAST = 600.0        # e^-600 ~ 1e-261: no underflow below this utility spread


def enumerate_assortments(n_items: int, capacity: int) -> np.ndarray:
    """All non-empty assortments of at most ``capacity`` of ``n_items`` items, as an (M, capacity)
    int array of item indices padded with ``n_items``; M = sum_{k=1..capacity} C(n_items, k)."""
    if n_items < 1 or not 1 <= capacity <= n_items:
        raise ValueError(f"need 1 <= capacity <= n_items, got capacity={capacity}, n_items={n_items}")
    rows = [c + (n_items,) * (capacity - k) for k in range(1, capacity + 1)
            for c in combinations(range(n_items), k)]
    out = np.array(rows, dtype=np.int64)
    assert len(out) == sum(comb(n_items, k) for k in range(1, capacity + 1))
    return out


def _pad(a: np.ndarray, value: float) -> np.ndarray:
    """Append the dummy item (value ``value``) along the last axis."""
    pad = np.full(a.shape[:-1] + (1,), value, dtype=float)
    return np.concatenate([a, pad], axis=-1)


def _lse(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """log sum exp along ``axis``; -inf for an all -inf slice."""
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(a - m), axis=axis)) + np.squeeze(m, axis)


def _log_revenue_gather(u: np.ndarray, r: np.ndarray, assortments: np.ndarray) -> np.ndarray:
    """log R(S, u) by gathering each assortment's items and a log-sum-exp per assortment."""
    up = _pad(u, -np.inf)[..., assortments]                  # (..., M, K)
    with np.errstate(divide="ignore"):
        lr = np.log(_pad(r, 0.0))[..., assortments]
    return _lse(lr + up) - np.logaddexp(0.0, _lse(up))


def log_revenue(u: np.ndarray, r: np.ndarray, assortments: np.ndarray) -> np.ndarray:
    """log R(S, u) for every assortment S; u, r: (..., N) -> (..., M). Exact for any finite u
    (revenues > 0).

    Rows whose utilities (and the no-purchase option's 0) span less than SPREAD_FAST use one shift
    m = max(0, max_i u_i) for all assortments: R = sum_S r_i e^{u_i - m} / (e^{-m} + sum_S e^{u_i - m}),
    two matrix products with the 0/1 item-assortment matrix, and no term can underflow. Wider rows
    (the baseline's huge optimistic utilities) take a log-sum-exp per assortment."""
    u = np.asarray(u, dtype=float)
    r = np.broadcast_to(np.asarray(r, dtype=float), u.shape)
    n_items = u.shape[-1]
    lead = u.shape[:-1]
    u2, r2 = u.reshape(-1, n_items), r.reshape(-1, n_items)
    m = np.maximum(0.0, u2.max(-1))
    fast = (m - np.minimum(0.0, u2.min(-1))) < SPREAD_FAST
    out = np.empty((u2.shape[0], len(assortments)))
    if fast.any():
        ind = np.zeros((len(assortments), n_items + 1))
        np.put_along_axis(ind, assortments, 1.0, axis=1)
        ind = ind[:, :n_items].T                                # (N, M) 0/1
        e = np.exp(u2[fast] - m[fast, None])
        out[fast] = np.log((r2[fast] * e) @ ind) - np.log(np.exp(-m[fast])[:, None] + e @ ind)
    if not fast.all():
        out[~fast] = _log_revenue_gather(u2[~fast], r2[~fast], assortments)
    return out.reshape(lead + (len(assortments),))


def revenue(u: np.ndarray, r: np.ndarray, assortments: np.ndarray) -> np.ndarray:
    """R(S, u) for every assortment; (..., N) -> (..., M)."""
    return np.exp(log_revenue(u, r, assortments))


def _probs_logden(u_s: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(purchase probabilities (..., K), log(1 + sum_S e^u) (...)) of offered items; ``mask``
    marks real items. One shift m = max(0, max u) per row (log-sum-exp with the outside option)."""
    um = np.where(mask, u_s, -np.inf)
    m = np.maximum(0.0, um.max(-1))
    e = np.exp(um - m[..., None])                              # 0 for padding
    tot = e.sum(-1) + np.exp(-m)
    return e / tot[..., None], m + np.log(tot)


def choice_probs(u_s: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Purchase probabilities of the offered items, (..., K) -> (..., K) (no-purchase = 1 - sum);
    ``mask`` marks real items (padding gets probability 0). Log-sum-exp with the outside option."""
    return _probs_logden(u_s, mask)[0]


def kappa(radius: float, capacity: int) -> float:
    """Oh & Iyengar's kappa: the smallest p_i(S, theta) p_0(S, theta) over ||theta|| <= radius,
    ||x|| <= 1 and |S| <= capacity. Utilities range over [-radius, radius]; the product
    e^{u_i} / (1 + e^{u_i} + sum_{j != i} e^{u_j})^2 is smallest with the other K-1 items at +radius
    and u_i at -radius (it increases in u_i while e^{u_i} < 1 + sum_{j != i} e^{u_j})."""
    lo, hi = np.exp(-radius), np.exp(radius)
    den = 1.0 + lo + (capacity - 1) * hi
    return float(lo / den ** 2)


def sample_choices(u_s: np.ndarray, mask: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Inverse-CDF draw of the chosen slot (NO_PURCHASE or 0..K-1) from uniforms in [0, 1)."""
    p = choice_probs(u_s, mask)
    cdf = np.cumsum(p, axis=-1)
    slot = np.sum(uniform[..., None] >= cdf, axis=-1)          # K = no purchase
    return np.where(slot >= p.shape[-1], NO_PURCHASE, slot)


def utilities(X: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """x' theta for X (..., n, K, d) and theta (..., d) -> (..., n, K), as one matmul per run."""
    sh = X.shape
    flat = X.reshape(sh[:-3] + (sh[-3] * sh[-2], sh[-1])) @ theta[..., :, None]
    return flat.reshape(sh[:-1])


# ----------------------------------------------------------------------------------------------
# likelihood of logged choices: X (..., n, K, d) features of the offered items, mask (..., n, K),
# y (..., n) chosen slot or NO_PURCHASE. Ridge lam/2 ||theta||^2 makes the MLE exist early on.

def chosen_features(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """sum over rounds of the chosen item's features (0 for no purchase): (..., n, K, d) -> (..., d).
    The log-likelihood's linear part is theta' of this."""
    xc = np.take_along_axis(X, np.maximum(y, 0)[..., None, None], -2)[..., 0, :]
    return np.where((y >= 0)[..., None], xc, 0.0).sum(-2)


def nll(theta: np.ndarray, X: np.ndarray, mask: np.ndarray, y: np.ndarray, lam: float,
        chosen: np.ndarray | None = None) -> np.ndarray:
    """Negative log-likelihood + lam/2 ||theta||^2; theta (..., d) -> (...). ``chosen`` =
    chosen_features(X, y) when the caller has it."""
    c = chosen_features(X, y) if chosen is None else chosen
    _, log_den = _probs_logden(utilities(X, theta), mask)
    return log_den.sum(-1) - np.sum(theta * c, -1) + 0.5 * lam * np.sum(theta ** 2, -1)


def nll_grad_hess(theta, X, mask, y, lam: float, chosen: np.ndarray | None = None):
    """(nll, gradient (..., d), Hessian (..., d, d)) of :func:`nll`. The gradient is
    sum_t (E_p[x] - x_chosen) + lam theta; the Hessian sum_t Cov_p[x] + lam I (the MNL Fisher
    information of the logged assortments at theta)."""
    c = chosen_features(X, y) if chosen is None else chosen
    p, log_den = _probs_logden(utilities(X, theta), mask)
    f = log_den.sum(-1) - np.sum(theta * c, -1) + 0.5 * lam * np.sum(theta ** 2, -1)
    Xp = X * p[..., None]
    ex = Xp.sum(-2)                                           # E_p[x] per round
    g = ex.sum(-2) - c + lam * theta
    H = fisher_from_probs(p, X, ex, Xp) + lam * np.eye(theta.shape[-1])
    return f, g, H


def fisher_from_probs(p, X, ex=None, Xp=None):
    """sum over rounds of sum_i p_i x_i x_i' - (sum_i p_i x_i)(sum_i p_i x_i)' (``Xp`` = X p,
    ``ex`` = its sum over the slots, when the caller has them)."""
    Xp = X * p[..., None] if Xp is None else Xp
    ex = Xp.sum(-2) if ex is None else ex
    sh = X.shape
    flat = sh[:-3] + (sh[-3] * sh[-2], sh[-1])                # rounds x slots flattened
    return np.swapaxes(Xp.reshape(flat), -1, -2) @ X.reshape(flat) - np.swapaxes(ex, -1, -2) @ ex


def fisher(theta, X, mask):
    """The MNL Fisher information (Hessian of the nll without ridge) of the logged rounds at theta."""
    u = utilities(X, theta)
    return fisher_from_probs(choice_probs(u, mask), X)


def newton_mle(X, mask, y, lam: float, theta0=None, tol: float = 1e-8, max_iter: int = 50,
               max_halvings: int = 30):
    """Ridge MLE of every run at once (leading axes of X): Newton steps with Armijo backtracking,
    each run with its own step length, a run stops once its gradient norm is below ``tol``.
    Returns (theta (..., d), iterations, largest final gradient norm). The nll is strictly convex
    (lam > 0), so this is the unique minimiser that scipy.optimize.minimize also finds."""
    d = X.shape[-1]
    theta = np.zeros(X.shape[:-3] + (d,)) if theta0 is None else np.array(theta0, dtype=float)
    c = chosen_features(X, y)
    it = 0
    for it in range(1, max_iter + 1):
        f, g, H = nll_grad_hess(theta, X, mask, y, lam, c)
        active = np.linalg.norm(g, axis=-1) >= tol
        if not active.any():
            return theta, it - 1, float(np.max(np.linalg.norm(g, axis=-1)))
        step = np.where(active[..., None], -np.linalg.solve(H, g[..., None])[..., 0], 0.0)
        slope = np.sum(g * step, -1)
        t = np.ones(f.shape)
        todo = active.copy()
        for _ in range(max_halvings):
            f_new = nll(theta + t[..., None] * step, X, mask, y, lam, c)
            # Armijo, with room for rounding once the decrease is below float resolution of f
            ok = f_new <= f + 1e-4 * t * slope + 1e-13 * np.abs(f)
            todo &= ~ok
            if not todo.any():
                break
            t = np.where(todo, 0.5 * t, t)
        theta = theta + t[..., None] * step
    _, g, _ = nll_grad_hess(theta, X, mask, y, lam, c)
    return theta, it, float(np.max(np.linalg.norm(g, axis=-1)))


def scipy_mle(X, mask, y, lam: float, theta0=None, tol: float = 1e-10):
    """The library answer for one run: scipy.optimize.minimize (trust-exact) on the same ridge
    nll with the analytic gradient and Hessian. X (n, K, d). Returns the OptimizeResult.

    (sklearn's multinomial LogisticRegression does not fit this model: it learns one weight
    vector per class over a shared feature vector, whereas the MNL choice model shares one theta
    across items with item-specific features and a choice set that changes every round -- a
    conditional logit.)"""
    from scipy.optimize import minimize

    d = X.shape[-1]
    x0 = np.zeros(d) if theta0 is None else np.asarray(theta0, dtype=float)
    fun = lambda th: nll_grad_hess(th, X, mask, y, lam)  # noqa: E731
    return minimize(lambda th: fun(th)[0], x0, jac=lambda th: fun(th)[1], hess=lambda th: fun(th)[2],
                    method="trust-exact", options={"gtol": tol})


def widths(Xq: np.ndarray, M: np.ndarray) -> np.ndarray:
    """||x||_{M^{-1}} for every item: Xq (..., N, d), M (..., d, d) positive definite -> (..., N)."""
    L = np.linalg.cholesky(M)
    z = np.linalg.solve(L[..., None, :, :], Xq[..., None])[..., 0]   # L^{-1} x per item
    return np.sqrt(np.sum(z ** 2, -1))


def confidence_radius(t, d: int, capacity: int) -> np.ndarray:
    """sqrt(2 d log(1 + t K / d) + 2 log t): Oh & Iyengar's (2021) radius without its 1/(2 kappa)."""
    t = np.maximum(np.asarray(t, dtype=float), 1.0)
    return np.sqrt(2 * d * np.log1p(t * capacity / d) + 2 * np.log(t))


def log_revenue_box_min(u_lo: np.ndarray, u_hi: np.ndarray, r: np.ndarray, assortments: np.ndarray) -> np.ndarray:
    """log of min_{u_lo <= u <= u_hi} R(S, u) for every assortment S; (..., N) -> (..., M).

    dR/dv_i has the sign of r_i - R (v_i = e^{u_i}), so at the minimum the items with revenue above
    the minimum sit at their lower utility and those below at their upper one: the minimiser is
    one of the K + 1 "top j items (by revenue) low, the rest high" corners, and the minimum over
    those corners is the minimum over the box. Used for pessimism: the box holds every utility
    vector of a confidence ellipsoid (u_i in x_i' theta_hat +- c ||x_i||_{M^-1}), so the value
    is a valid lower confidence bound for the ellipsoid too."""
    K = assortments.shape[1]
    rp = _pad(r, -np.inf)[..., assortments]                           # dummy item never "above"
    # rank of each slot among the assortment's items by revenue (ties broken by slot order)
    above = (rp[..., None, :] > rp[..., :, None]) | (
        (rp[..., None, :] == rp[..., :, None]) & (np.arange(K)[None, :] < np.arange(K)[:, None]))
    rank = above.sum(-1)                                              # (..., M, K)
    lo = _pad(u_lo, -np.inf)[..., assortments]
    hi = _pad(u_hi, -np.inf)[..., assortments]
    with np.errstate(divide="ignore"):
        lr = np.log(_pad(r, 0.0))[..., assortments]
    best = None
    for j in range(K + 1):
        u = np.where(rank < j, lo, hi)
        val = _lse(lr + u) - np.logaddexp(0.0, _lse(u))
        best = val if best is None else np.minimum(best, val)
    return best


def revenue_gradient_norms(u: np.ndarray, r: np.ndarray, Xq: np.ndarray, M: np.ndarray,
                           assortments: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R(S, u), ||grad_theta R(S, theta)||_{M^{-1}}) for every assortment, with
    grad_theta R = sum_{i in S} p_i (r_i - R) x_i (p_i the purchase probabilities).
    u, r: (..., N); Xq: (..., N, d); M: (..., d, d) -> two (..., M_assortments) arrays."""
    n_items, d = Xq.shape[-2:]
    up = _pad(u, -np.inf)[..., assortments]                            # (..., M, K)
    rp = _pad(r, 0.0)[..., assortments]
    xp = np.concatenate([Xq, np.zeros(Xq.shape[:-2] + (1, d))], -2)
    xs = np.take(xp, assortments, axis=-2)                             # (..., M, K, d)
    p = choice_probs(up, assortments < n_items)
    rev = np.sum(p * rp, -1)
    grad = np.sum((p * (rp - rev[..., None]))[..., None] * xs, -2)     # (..., M, d)
    L = np.linalg.cholesky(M)
    z = np.linalg.solve(L[..., None, :, :], grad[..., None])[..., 0]
    return rev, np.sqrt(np.sum(z ** 2, -1))


def highs_assortment(u: np.ndarray, r: np.ndarray, capacity: int) -> tuple[float, np.ndarray]:
    """The capacitated MNL assortment problem solved by HiGHS (scipy.optimize.linprog, dual simplex)
    as the sales-based LP of Davis, Gallego & Topaloglu (2013, "Assortment planning under the
    multinomial logit model with totally unimodular constraint structures"):

        max sum_i r_i w_i  s.t.  w_0 + sum_i w_i = 1,  w_i <= v_i w_0,  sum_i w_i / v_i <= K w_0,  w >= 0,

    v_i = e^{u_i}; w_i is the purchase probability of i and w_0 that of no purchase. The constraint
    structure is totally unimodular, so a vertex solution is an assortment: S = {i : w_i > 0}.
    Returns (optimal revenue, sorted item indices of S). One problem (u, r of shape (N,))."""
    from scipy.optimize import linprog

    n = len(u)
    v = np.exp(np.asarray(u, dtype=float))
    c = np.concatenate([[0.0], -np.asarray(r, dtype=float)])
    a_ub = np.zeros((n + 1, n + 1))
    a_ub[:n, 0] = -v
    a_ub[np.arange(n), np.arange(1, n + 1)] = 1.0
    a_ub[n, 0] = -capacity
    a_ub[n, 1:] = 1.0 / v
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(n + 1), A_eq=np.ones((1, n + 1)), b_eq=[1.0],
                  bounds=(0, None), method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"HiGHS did not solve the assortment LP: {res.message}")
    w = res.x[1:]
    return float(-res.fun), np.flatnonzero(w > 1e-9 * max(1.0, w.max()))
