"""The linear bigram model of Kunstner & Bach (arXiv 2505.19227) and its exact simulators.

Model. Tokens are one-hot; the input token x has marginal frequencies pi_i ∝ i^-alpha and
the next token y | x = i has conditional frequencies that are the same power law up to a
permutation sigma_i of the vocabulary: P[i, sigma_i(k)] = q_k ∝ k^-alpha. The model
predicts y from x with a d×d matrix W and the loss is

    L(W) = ||X W - Y||_F^2 / (2n)  =  1/2 sum_i pi_i ||W_i - P_i||^2 + L*,

so the Hessian is diag(pi) ⊗ I and the minimiser is W* = P.

Why it reduces exactly to per-frequency scalars (the "simulator").
* Gradient descent with step 1/L, L = pi_1: row i's residual shrinks by (1 - pi_i/pi_1)
  each step, and every row has the same squared norm ||P_i||^2 = sum_k q_k^2, so the
  relative error after t steps is  sum_i pi_i (1 - pi_i/pi_1)^(2t) / sum_i pi_i  (closed form).
* Sign descent: sign(grad_ij) = sign(W_ij - P_ij) does not depend on pi, so each entry
  walks towards its target q_k by eta per step and then oscillates with period 2. Entry
  (i, sigma_i(k)) has error e_k(t) for every row i, and since sum_i pi_i = 1 the relative
  error is  sum_k e_k(t)^2 / sum_k q_k^2, with e_k(t) in closed form (see sign_errors).

Both are checked against the full d×d torch model in tests/zipf_bigram.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def alpha_key(alpha: float) -> str:
    return f"alpha_{alpha:g}".replace(".", "p")


def power_law(d: int, alpha: float) -> np.ndarray:
    """Frequencies pi_k ∝ k^-alpha, k = 1..d, normalised to sum to 1 (float64)."""
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    p = np.arange(1, d + 1, dtype=np.float64) ** (-float(alpha))
    return p / p.sum()


# --------------------------------------------------------------------------------------
# Gradient descent: closed form
# --------------------------------------------------------------------------------------
def gd_relative_error(pi: np.ndarray, t: int | np.ndarray) -> np.ndarray:
    """Relative error (L(W_t) - L*) / (L(W_0) - L*) of GD with step 1/pi_max from W_0 = 0."""
    pi = np.asarray(pi, dtype=np.float64)
    ratio = pi / pi.max()
    t = np.asarray(t, dtype=np.float64)
    decay = np.power.outer(1.0 - ratio, 2.0 * t).T if t.ndim else np.power(1.0 - ratio, 2.0 * t)
    return (decay * pi).sum(axis=-1) / pi.sum()


def first_hit(err_at, eps: float, t_max: int) -> int | None:
    """Smallest integer t >= 0 with err_at(t) <= eps, assuming err_at is non-increasing.

    Exponential search then bisection; None when not reached by t_max.
    """
    if err_at(0) <= eps:
        return 0
    hi = 1
    while err_at(hi) > eps:
        if hi >= t_max:
            return None
        hi = min(2 * hi, t_max)
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if err_at(mid) > eps:
            lo = mid
        else:
            hi = mid
    return hi


def gd_iterations(pi: np.ndarray, eps: float, t_max: int = 10**9) -> int | None:
    return first_hit(lambda t: float(gd_relative_error(pi, t)), eps, t_max)


# --------------------------------------------------------------------------------------
# Sign descent: closed form of the per-entry trajectories
# --------------------------------------------------------------------------------------
def sign_errors(q: np.ndarray, t: int, eta: np.ndarray | float) -> np.ndarray:
    """|w_k(t) - q_k| for sign descent from w = 0 with constant step eta.

    The entry climbs eta per step for m = floor(q/eta) steps, then (if the remainder
    r = q - m*eta is not 0) alternates between errors eta - r and r. With r = 0 exact
    arithmetic stops on the target; a floating-point iterate does so only when it lands
    exactly (e.g. one step of eta = q), and otherwise oscillates within rounding of it, which
    is why ``tuned_sign`` keeps its steps in generic position (see GENERIC).
    Shape: broadcast of eta[..., None] against q.
    """
    q = np.asarray(q, dtype=np.float64)
    eta = np.asarray(eta, dtype=np.float64)[..., None]
    m = np.floor(q / eta)
    r = q - m * eta
    climbing = t <= m
    odd = np.mod(t - m, 2) == 1
    return np.where(climbing, q - t * eta, np.where(r == 0, 0.0, np.where(odd, eta - r, r)))


def sign_relative_error(q: np.ndarray, t: int, eta: np.ndarray | float) -> np.ndarray:
    e = sign_errors(q, t, eta)
    return (e ** 2).sum(axis=-1) / (np.asarray(q) ** 2).sum()


def sign_envelope(q: np.ndarray, t: int, eta: np.ndarray | float) -> np.ndarray:
    """The worse of iterates t and t+1: a fixed step oscillates with period 2, and a step
    tuned per budget must not win by the parity of the stopping time.

    Same as max(sign_relative_error(q, t, eta), sign_relative_error(q, t + 1, eta)), with
    floor(q / eta) computed once (this is the inner loop of the tuning).
    """
    q = np.asarray(q, dtype=np.float64)
    eta = np.asarray(eta, dtype=np.float64)[..., None]
    m = np.floor(q / eta)
    r = q - m * eta
    odd_t = np.mod(t - m, 2) == 1          # parity at t; at t + 1 it is the opposite
    settled_t = np.where(r == 0, 0.0, np.where(odd_t, eta - r, r))
    settled_t1 = np.where(r == 0, 0.0, np.where(odd_t, r, eta - r))
    e_t = np.where(t <= m, q - t * eta, settled_t)
    e_t1 = np.where(t + 1 <= m, q - (t + 1) * eta, settled_t1)
    return np.maximum((e_t ** 2).sum(axis=-1), (e_t1 ** 2).sum(axis=-1)) / (q ** 2).sum()


def sign_simulate(q: np.ndarray, steps: int, eta: float) -> np.ndarray:
    """Relative error after 0..steps iterations of sign descent, by iterating the d distinct
    per-frequency entries (the same floating-point operations as the d×d model).

    sign_relative_error is its closed form; the two can differ when an entry sits within
    rounding of a step boundary (q/eta an integer up to an ulp): the iterate's parity then
    flips, which moves that entry's error between r and eta - r (at most eta^2 / sum q^2).
    """
    q = np.asarray(q, dtype=np.float64)
    w = np.zeros_like(q)
    denom = float((q ** 2).sum())
    out = np.empty(steps + 1)
    for t in range(steps + 1):
        out[t] = float(((w - q) ** 2).sum()) / denom
        w = w - eta * np.sign(w - q)
    return out


# An irrational factor that keeps the step grid in generic position: without it, grid
# points such as q_1 / T make q_k / eta exact integers, where the closed form (exact
# arithmetic) and the floating-point iterate part ways.
GENERIC = 1.0 + (5 ** 0.5 - 1) / 2 * 1e-3


@dataclass(frozen=True)
class SignTuning:
    grid_lo: float      # grid spans [grid_lo, grid_hi] * q_1 / T (times GENERIC)
    grid_hi: float
    grid_size: int
    budget_ratio: float = 1.05   # budgets T scanned on a geometric grid, then every T in the last gap


def tuned_sign(q: np.ndarray, t: int, tuning: SignTuning) -> tuple[float, float]:
    """Best envelope error over a log grid of constant steps for budget t; (error, eta)."""
    if t == 0:
        return 1.0, 0.0
    scale = float(np.max(q)) / t * GENERIC
    etas = np.geomspace(tuning.grid_lo * scale, tuning.grid_hi * scale, tuning.grid_size)
    errs = sign_envelope(q, t, etas)
    i = int(np.argmin(errs))
    return float(errs[i]), float(etas[i])


def scan_first_hit(err_at, eps: float, t_max: int, ratio: float) -> int | None:
    """Smallest t with err_at(t) <= eps for an err_at that need not be monotone.

    Budgets are scanned on a geometric grid (every integer up to 1/(ratio-1), then steps of
    ~ratio); at the first grid hit every integer in the gap before it is checked too. Exact
    unless err_at dips below eps between two earlier grid points and comes back above.
    """
    prev, t = 0, 0
    while t <= t_max:
        if err_at(t) <= eps:
            for s in range(prev + 1, t):
                if err_at(s) <= eps:
                    return s
            return t
        prev, t = t, max(t + 1, int(np.ceil(t * ratio)))
    return None


def sign_iterations(q: np.ndarray, eps: float, tuning: SignTuning,
                    t_max: int = 10**7) -> tuple[int | None, float]:
    """Smallest budget T for which a tuned constant step reaches relative error eps; (T, eta)."""
    t = scan_first_hit(lambda t: tuned_sign(q, t, tuning)[0], eps, t_max, tuning.budget_ratio)
    return t, (tuned_sign(q, t, tuning)[1] if t else 0.0)


# --------------------------------------------------------------------------------------
# Log-log fits
# --------------------------------------------------------------------------------------
def loglog_fit(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Least-squares slope of log y on log x with its standard error and 95% interval."""
    from scipy import stats

    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    if len(lx) < 2:
        raise ValueError("a log-log fit needs at least two points")
    if np.allclose(ly, ly[0]):
        return {"slope": 0.0, "intercept": float(ly[0]), "stderr": 0.0, "ci95_low": 0.0,
                "ci95_high": 0.0, "r2": 1.0}
    res = stats.linregress(lx, ly)
    tcrit = float(stats.t.ppf(0.975, max(len(lx) - 2, 1))) if len(lx) > 2 else math.nan
    half = tcrit * res.stderr if len(lx) > 2 else math.nan
    return {"slope": float(res.slope), "intercept": float(res.intercept),
            "stderr": float(res.stderr), "ci95_low": float(res.slope - half),
            "ci95_high": float(res.slope + half), "r2": float(res.rvalue ** 2)}
