"""DOPE-style tabular baseline: optimistic reward, pessimistic utility, extended LP by HiGHS.

Follows the official repository's ``DOPE.py`` and its notebook loop (written anew in numpy):
counts n(h, s, a, s') give P_hat = n / max(n(h, s, a), 1) (1/S where (h, s, a) is unvisited) and
the Bernstein-type bonus beta(h, s, a, s') = sqrt(P_hat (1 - P_hat) / n) + 1 / n with
n = max(n(h, s, a), 1). The planner is the *extended* LP over z(h, s, a, s') >= 0 (occupancy
of transitions; the transition may be any kernel within P_hat +- beta):

    max   sum z (r + C_r bonus)                 bonus(h, s, a) = sum_s' beta(h, s, a, s')
    s.t.  sum_{a, s'} z(0, s, a, s') = mu(s);   sum_{a, s'} z(h, s, a, s') = sum_{s0, a0} z(h-1, s0, a0, s)
          (P_hat - beta) sum_y z(h, s, a, y) <= z(h, s, a, s') <= (P_hat + beta) sum_y z(h, s, a, y)
          sum z (u - C_u bonus) >= b,           0 <= z <= 1

solved exactly with HiGHS (the official code uses mpax's PDHG to 1e-3); the policy is
pi(a | h, s) proportional to sum_s' z(h, s, a, s'). When the LP is infeasible the known safe
policy is played (as in the official code).
"""
from __future__ import annotations

import numpy as np


class ExtendedLP:
    """The extended LP of one CMDP shape, built once by highspy and then kept up to date.

    Counts change only at the H visited (h, s, a) of an episode, so only the coefficients of
    those groups change (their 2 S box rows, their utility-row entries and costs):
    :meth:`set_group` rewrites them with ``changeCoeff``/``changeColsCost`` and :meth:`solve`
    re-runs HiGHS from the previous basis (warm start). :meth:`solve_fresh` builds and solves
    the whole LP from scratch (the reference the tests compare with).
    """

    def __init__(self, H: int, S: int, A: int, mu: np.ndarray, threshold: float):
        import highspy

        self.H, self.S, self.A = H, S, A
        self.mu, self.threshold = np.asarray(mu, dtype=float), float(threshold)
        n = H * S * A * S
        self.n = n
        self.n_flow = H * S
        self.n_rows = self.n_flow + 2 * n + 1
        self._hs = highspy
        self._highs = None
        self.objective = float("nan")

    # -- layout: column i = ((h * S + s) * A + a) * S + s'; rows: flow (h, s), up i, low i, utility
    def _col(self, h, s, a, sp):
        return ((h * self.S + s) * self.A + a) * self.S + sp

    def _full_model(self, P_hat, beta, reward, utility):
        hs = self._hs
        H, S, A, n, nf = self.H, self.S, self.A, self.n, self.n_flow
        idx = np.arange(n).reshape(H, S, A, S)
        out_r = np.broadcast_to((np.arange(H)[:, None] * S + np.arange(S)[None, :])[:, :, None, None],
                                (H, S, A, S)).reshape(-1)
        in_r = np.broadcast_to((np.arange(1, H)[:, None] * S + np.arange(S)[None, :])[:, None, None, :],
                               (H - 1, S, A, S)).reshape(-1)
        grp_cols = np.broadcast_to(idx[..., None, :], (H, S, A, S, S)).reshape(-1)       # (i, y) -> col (g, y)
        grp_rows = np.repeat(np.arange(n), S)
        eye = np.broadcast_to(np.eye(S), (H, S, A, S, S)).reshape(-1)
        up = eye - np.repeat((P_hat + beta).reshape(-1), S)
        lo = eye - np.repeat((P_hat - beta).reshape(-1), S)
        rows = np.concatenate([out_r, in_r, nf + grp_rows, nf + n + grp_rows, np.full(n, nf + 2 * n)])
        cols = np.concatenate([idx.reshape(-1), idx[:-1].reshape(-1), grp_cols, grp_cols, np.arange(n)])
        vals = np.concatenate([np.ones(n), -np.ones((H - 1) * S * A * S), up, lo,
                               np.broadcast_to(utility[..., None], (H, S, A, S)).reshape(-1)])
        order = np.lexsort((rows, cols))
        inf = hs.kHighsInf
        lp = hs.HighsLp()
        lp.num_col_, lp.num_row_ = n, self.n_rows
        lp.col_cost_ = -np.broadcast_to(reward[..., None], (H, S, A, S)).reshape(-1).astype(float)
        lp.col_lower_, lp.col_upper_ = np.zeros(n), np.ones(n)
        lp.row_lower_ = np.concatenate([self.mu, np.zeros((H - 1) * S), np.full(n, -inf), np.zeros(n),
                                        [self.threshold]])
        lp.row_upper_ = np.concatenate([self.mu, np.zeros((H - 1) * S), np.zeros(n), np.full(n, inf), [inf]])
        lp.a_matrix_.format_ = hs.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.searchsorted(cols[order], np.arange(n + 1)).astype(np.int32)
        lp.a_matrix_.index_ = rows[order].astype(np.int32)
        lp.a_matrix_.value_ = vals[order]
        h = hs.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.passModel(lp)
        return h

    def load(self, P_hat, beta, reward, utility) -> None:
        """(Re)build the whole model; P_hat, beta (H, S, A, S), reward, utility (H, S, A)."""
        self._highs = self._full_model(P_hat, beta, reward, utility)

    def set_group(self, h: int, s: int, a: int, p_hat: np.ndarray, beta: np.ndarray, reward: float,
                  utility: float) -> None:
        """New coefficients of group (h, s, a): its S box-row pairs, utility entries and costs."""
        S, n, nf = self.S, self.n, self.n_flow
        hi = self._highs
        c0 = self._col(h, s, a, 0)
        for sp in range(S):
            i = c0 + sp
            for y in range(S):
                j = c0 + y
                diag = 1.0 if y == sp else 0.0
                hi.changeCoeff(nf + i, j, diag - (p_hat[sp] + beta[sp]))
                hi.changeCoeff(nf + n + i, j, diag - (p_hat[sp] - beta[sp]))
            hi.changeCoeff(nf + 2 * n, i, utility)
        hi.changeColsCost(S, np.arange(c0, c0 + S, dtype=np.int32), np.full(S, -reward))

    def solve(self) -> np.ndarray | None:
        """Policy (H, S, A) of the current model, or None when HiGHS does not report optimal."""
        return self._run(self._highs)

    def solve_fresh(self, P_hat, beta, reward, utility) -> np.ndarray | None:
        """Build the LP from scratch and solve it (no warm start)."""
        return self._run(self._full_model(P_hat, beta, reward, utility))

    def _run(self, hi) -> np.ndarray | None:
        """Solve; keep the optimal value (optimistic reward) in ``self.objective`` (NaN if not optimal)."""
        hi.run()
        if hi.getModelStatus() != self._hs.HighsModelStatus.kOptimal:
            self.objective = float("nan")
            return None
        self.objective = -float(hi.getInfo().objective_function_value)
        return _policy(np.asarray(hi.getSolution().col_value).reshape(self.H, self.S, self.A, self.S))


def _policy(z: np.ndarray) -> np.ndarray:
    """pi(a | h, s) proportional to sum_s' z(h, s, a, s'); uniform where the state gets no mass."""
    occ = np.maximum(z.sum(axis=-1), 0.0)
    tot = occ.sum(axis=-1, keepdims=True)
    return np.where(tot > 0, occ / np.where(tot > 0, tot, 1.0), 1.0 / z.shape[2])


def bernstein_bonus(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P_hat, beta) of the official ``compute_bonus_HSAS`` from counts n(h, s, a, s')."""
    S = counts.shape[-1]
    n_sa = counts.sum(axis=-1, keepdims=True)
    n = np.maximum(n_sa, 1)
    P_hat = np.where(n_sa > 0, counts / n, 1.0 / S)
    beta = np.sqrt(P_hat * (1 - P_hat) / n) + 1.0 / n
    return P_hat, beta


def run_dope(cmdp, episodes: int, seed, c_r: float = 1.0, c_u: float = 1.0,
             progress: str | None = None) -> dict[str, np.ndarray]:
    """One DOPE-style run (the official ``update_DOPE`` loop); per-episode exact values.

    Returns ``V_r``, ``V_u`` (exact values of the policy played), ``safe`` (1 where the LP was
    infeasible and the safe policy was played) and ``lp_s`` (seconds spent in HiGHS)."""
    import time

    from .cmdp import policy_values

    H, S, A = cmdp.H, cmdp.S, cmdp.A
    if cmdp.safe_policy is None:
        raise ValueError("DOPE needs the CMDP's threshold and safe policy (cmdp.with_threshold)")
    lp = ExtendedLP(H, S, A, cmdp.mu, cmdp.threshold)
    U = np.random.default_rng(seed).random((episodes, H, 2))
    cumP = np.cumsum(cmdp.P, axis=-1)
    counts = np.zeros((H, S, A, S))
    P_hat, beta = bernstein_bonus(counts)
    bonus = beta.sum(axis=-1)
    lp.load(P_hat, beta, cmdp.r + c_r * bonus, cmdp.u - c_u * bonus)
    RU = np.stack([cmdp.r, cmdp.u])
    out = {k: np.zeros(episodes) for k in ("V_r", "V_u", "safe")}
    pol, safe = cmdp.safe_policy, 1.0
    start = int(np.argmax(cmdp.mu))
    lp_s = 0.0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=episodes, desc=progress, mininterval=2.0, leave=False)
    for k in range(episodes):
        out["V_r"][k], out["V_u"][k] = policy_values(cmdp.P, pol, RU, cmdp.mu)
        out["safe"][k] = safe
        s = start
        visited = []
        for h in range(H):
            a = min(int((U[k, h, 0] > np.cumsum(pol[h, s])).sum()), A - 1)
            s2 = min(int((U[k, h, 1] > cumP[h, s, a]).sum()), S - 1)
            counts[h, s, a, s2] += 1
            visited.append((h, s, a))
            s = s2
        t0 = time.perf_counter()
        for h, s, a in visited:                 # only the visited groups' coefficients change
            p, b = bernstein_bonus(counts[h, s, a][None])
            bs = float(b.sum())
            lp.set_group(h, s, a, p[0], b[0], float(cmdp.r[h, s, a]) + c_r * bs, float(cmdp.u[h, s, a]) - c_u * bs)
        new = lp.solve()
        lp_s += time.perf_counter() - t0
        pol, safe = (cmdp.safe_policy, 1.0) if new is None else (new, 0.0)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    out["lp_s"] = np.array(lp_s)
    return out
