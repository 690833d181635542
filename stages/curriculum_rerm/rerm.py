"""Biased regularised ERM (RERM) on sequences of linear-regression tasks, vectorised over replications and seeds.

The paper's learner: for tasks t = 1..T with data (X_t, y_t) of n_t rows,

    w_t = argmin_w  (1 / 2 n_t) ||X_t w - y_t||^2 + (lambda / 2) ||w - w_(t-1)||^2,     w_0 = 0,

i.e. ridge regression biased toward the previous task's solution. Its closed form is
w_t = w_(t-1) + X_t^T (X_t X_t^T + n_t lambda I)^-1 (y_t - X_t w_(t-1)) (the dual form: an
n_t x n_t solve, cheap when n_t < d). :func:`biased_ridge` solves it for a batch of seeds and a
grid of lambdas in one batched ``np.linalg.solve``; :func:`biased_sgd` runs plain per-sample SGD
on the same objective (the paper's SGD version) for a batch of seeds.

Tasks (:func:`make_tasks`): inputs x ~ N(0, I_d), labels y = x . w*_t + N(0, noise^2). With
isotropic inputs the final task's excess risk of w is exactly ||w - w*_T||^2. Three task
sequences share every X and every noise draw (the comparison is paired), and differ only in the
early tasks' optima:

* ``good``: w*_t = (t / T) w* + jitter (small steps toward w*; successive optima at most
  about ||w*|| / T (1 + jitter) apart: the (r, alpha) task-similarity condition with small r);
* ``violating``: w*_1..w*_(T-1) drawn at random with norm ||w*|| (successive optima about
  sqrt(2) ||w*|| apart: the condition fails), w*_T = w*;
* ``reversed``: the good curriculum's early tasks in reverse order (w*_(T-1), ..., w*_1, then
  w*): the same tasks and rows, larger steps between successive optima (a larger r).

``direct`` trains once, biased toward 0, on the final task's n samples (the same rows as the
curricula's last stage: the "equal data" comparison); ``direct_total`` trains once on T n
final-task samples (the curriculum's total sample count, all from the target task); ``pooled``
trains once, biased toward 0, on the good curriculum's T n rows with their own labels, uniform
weights (the curriculum's data without the curriculum).

Seeds: :func:`make_tasks` draws the tasks of one verdict seed (``reps`` replications) from that
seed's generator; :meth:`Tasks.concat` stacks several seeds' tasks along the first axis so that
every seed is solved in one batched call. Each replication is solved on its own (a batched
``np.linalg.solve``), so a seed's figures do not depend on the seeds batched beside it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RIDGE_ARMS = ("good", "violating", "reversed", "direct", "direct_total", "pooled")
SGD_ARMS = ("good", "violating", "direct", "direct_total")
CURRICULA = ("good", "violating", "reversed")


@dataclass
class Tasks:
    """Arrays for S replications, T tasks of n rows in d dimensions."""

    X: np.ndarray            # (S, T, n, d) inputs, shared by every arm
    noise: np.ndarray        # (S, T, n) label noise, shared by every arm
    w_star: np.ndarray       # (S, d) the target task's optimum w*
    optima: dict             # curriculum -> (S, T, d) each task's optimum w*_t (last = w*)
    y_target: np.ndarray     # (S, T, n) labels of every row under the target optimum (direct_total)

    def labels(self, arm: str) -> np.ndarray:
        """(S, T, n) labels of the curriculum ``arm``'s task sequence."""
        return np.einsum("stnd,std->stn", self.X, self.optima[arm]) + self.noise

    @classmethod
    def concat(cls, parts: list["Tasks"]) -> "Tasks":
        """Several seeds' tasks stacked along the replications axis (in the order given)."""
        return cls(X=np.concatenate([t.X for t in parts]), noise=np.concatenate([t.noise for t in parts]),
                   w_star=np.concatenate([t.w_star for t in parts]),
                   optima={k: np.concatenate([t.optima[k] for t in parts]) for k in parts[0].optima},
                   y_target=np.concatenate([t.y_target for t in parts]))


def make_tasks(rng: np.random.Generator, reps: int, n_tasks: int, n: int, d: int, w_norm: float,
               noise: float, jitter: float) -> Tasks:
    """The task sequences of the module docstring, ``reps`` replications drawn from ``rng``."""
    S, T = reps, n_tasks
    X = rng.standard_normal((S, T, n, d))
    eps = noise * rng.standard_normal((S, T, n))
    eps_target = noise * rng.standard_normal((S, T, n))
    w = rng.standard_normal((S, d))
    w *= w_norm / np.linalg.norm(w, axis=1, keepdims=True)
    frac = np.arange(1, T + 1) / T
    good = frac[None, :, None] * w[:, None, :]
    g = rng.standard_normal((S, T, d))
    g *= (jitter * w_norm / T) / np.linalg.norm(g, axis=2, keepdims=True)
    g[:, -1] = 0.0
    good = good + g
    viol = rng.standard_normal((S, T, d))
    viol *= w_norm / np.linalg.norm(viol, axis=2, keepdims=True)
    viol[:, -1] = w
    rev = np.concatenate([good[:, -2::-1], good[:, -1:]], axis=1)        # early tasks reversed, w* last
    y_target = np.einsum("stnd,sd->stn", X, w) + eps_target
    y_target[:, -1] = np.einsum("snd,sd->sn", X[:, -1], w) + eps[:, -1]   # the final stage's own rows
    return Tasks(X=X, noise=eps, w_star=w, optima={"good": good, "violating": viol, "reversed": rev},
                 y_target=y_target)


def biased_ridge(X: np.ndarray, y: np.ndarray, w_prev: np.ndarray, lams: np.ndarray) -> np.ndarray:
    """argmin_w (1/2n)||X w - y||^2 + (lam/2)||w - w_prev||^2 for every replication and every lam.

    X (S, n, d), y (S, n), w_prev (S, L, d), lams (L,) -> (S, L, d). Dual form (an n x n solve
    per replication and lam): w = w_prev + X^T (X X^T + n lam I)^-1 (y - X w_prev).
    """
    S, n, d = X.shape
    lams = np.asarray(lams, dtype=float)
    if (lams <= 0).any():
        raise ValueError(f"biased_ridge: every lambda must be > 0, got {lams.tolist()}")
    K = X @ X.transpose(0, 2, 1)                                        # (S, n, n)
    A = K[:, None] + (n * lams)[None, :, None, None] * np.eye(n)        # (S, L, n, n)
    r = y[:, None, :] - np.einsum("snd,sld->sln", X, w_prev)            # (S, L, n)
    alpha = np.linalg.solve(A, r[..., None])[..., 0]
    return w_prev + np.einsum("snd,sln->sld", X, alpha)


def run_sequence(X: np.ndarray, y: np.ndarray, lams: np.ndarray, w0: np.ndarray | None = None,
                 keep_all: bool = False) -> np.ndarray:
    """Biased RERM through tasks t = 1..T (X (S, T, n, d), y (S, T, n)), each task's solution the
    next one's bias, from w0 (default 0). Returns the final (S, L, d), or every task's (S, T, L, d)."""
    S, T, n, d = X.shape
    w = np.zeros((S, len(lams), d)) if w0 is None else w0
    out = []
    for t in range(T):
        w = biased_ridge(X[:, t], y[:, t], w, lams)
        out.append(w)
    return np.stack(out, axis=1) if keep_all else w


def excess_risk(w: np.ndarray, w_star: np.ndarray) -> np.ndarray:
    """E_x[(x . (w - w*))^2] = ||w - w*||^2 for x ~ N(0, I); w (S, ..., d), w_star (S, d)."""
    diff = w - w_star.reshape(w_star.shape[0], *([1] * (w.ndim - 2)), w_star.shape[1])
    return (diff ** 2).sum(axis=-1)


def arm_data(tasks: Tasks, arm: str) -> tuple[np.ndarray, np.ndarray]:
    """(X (S, stages, rows, d), y (S, stages, rows)) that ``arm`` trains on, stage after stage."""
    X = tasks.X
    S, T, n, d = X.shape
    if arm in CURRICULA:
        return X, tasks.labels(arm)
    if arm == "direct":
        return X[:, -1:], tasks.y_target[:, -1:]
    if arm == "direct_total":
        return X.reshape(S, 1, T * n, d), tasks.y_target.reshape(S, 1, T * n)
    if arm == "pooled":
        return X.reshape(S, 1, T * n, d), tasks.labels("good").reshape(S, 1, T * n)
    raise ValueError(f"unknown arm {arm!r}; one of {', '.join(RIDGE_ARMS)}")


def ridge_arms(tasks: Tasks, lams, arms=RIDGE_ARMS) -> dict[str, np.ndarray]:
    """Final-task excess risk (S, L) of every arm at every lambda (closed form)."""
    lams = np.asarray(lams, dtype=float)
    return {arm: excess_risk(run_sequence(*arm_data(tasks, arm), lams), tasks.w_star) for arm in arms}


def visit_orders(rngs: list[tuple[np.random.Generator, int]], n: int) -> np.ndarray:
    """(B, n) orders in which SGD visits n rows: each group of ``rows`` batch members draws its
    orders from its own generator (one group per seed), so a seed's draws do not depend on the
    seeds batched beside it."""
    return np.concatenate([g.permuted(np.tile(np.arange(n), (rows, 1)), axis=1) for g, rows in rngs])


def biased_sgd(X: np.ndarray, y: np.ndarray, w_prev: np.ndarray, lam: float, step: float, epochs: int,
               rngs: list[tuple[np.random.Generator, int]]) -> np.ndarray:
    """Per-sample SGD on (1/2n)||X w - y||^2 + (lam/2)||w - w_prev||^2 from w_prev, for a batch.

    X (B, n, d), y (B, n), w_prev (B, d). Each epoch visits the rows in a fresh random order (one
    order per batch member, from its group's generator in ``rngs``: [(generator, members), ...]
    covering the batch in order); the step is constant; the result is the average of the last
    epoch's iterates (tail averaging removes most of the constant-step noise). Each per-sample
    gradient (x.w - y) x + lam (w - w_prev) is an unbiased estimate of the objective's gradient.
    """
    B, n, d = X.shape
    if sum(rows for _, rows in rngs) != B:
        raise ValueError(f"biased_sgd: the generators' groups cover {sum(r for _, r in rngs)} of {B} batch members")
    w = w_prev.copy()
    idx = np.arange(B)
    avg = np.zeros_like(w)
    for e in range(epochs):
        order = visit_orders(rngs, n)
        for k in range(n):
            i = order[:, k]
            x = X[idx, i]                                                # (B, d)
            resid = np.einsum("bd,bd->b", x, w) - y[idx, i]
            w = w - step * (resid[:, None] * x + lam * (w - w_prev))
            if e == epochs - 1:
                avg += w
    return avg / n


def sgd_arms(tasks: Tasks, lam: float, step: float, epochs: int,
             rngs: list[tuple[np.random.Generator, int]], arms=SGD_ARMS) -> dict:
    """Final-task excess risk (S,) of every arm trained by :func:`biased_sgd`, task after task."""
    out = {}
    for arm in arms:
        Xa, ya = arm_data(tasks, arm)
        w = np.zeros((Xa.shape[0], Xa.shape[-1]))
        for t in range(Xa.shape[1]):
            w = biased_sgd(Xa[:, t], ya[:, t], w, lam, step, epochs, rngs)
        out[arm] = excess_risk(w[:, None, :], tasks.w_star)[:, 0]
    return out
