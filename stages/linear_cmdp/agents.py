"""The linear-CMDP learners, batched over independent runs: OPSE-LCMDP and the Ghosh et al. baseline.

Both follow the official notebook (``update`` / ``update_Ghosh``) and ``proposal.py`` /
``Ghosh_algo.py`` of matsuolab/Episode-Wise-Safe-Linear-CMDP, written anew in numpy. Every
episode k of a run:

1. play the current policy pi_k for one episode (H steps) in the true CMDP; record the exact
   V_r(pi_k) and V_u(pi_k) (backward induction) for regret and violation;
2. per step h: Lambda_h = I + sum phi phi^T (Sherman-Morrison on the inverse), bonus
   b_h(s, a) = ||phi(s, a)||_{Lambda_h^-1}, least-squares kernel
   P_hat_h(s' | s, a) = phi(s, a)^T Lambda_h^-1 sum_tau phi_tau 1[s'_tau = s'];
3. plan on P_hat with a softmax policy pi_lambda = softmax((Q_r + Q_d + lambda Q_u) / kappa),
   computed backwards in h, each Q by ``compute_Q_h``: Q(s, a) = R(s, a) +
   clip(c b(s, a) + P_hat V'(s, a), 0, tau (H - h)), V'(s) = sum_a pi (Q + e entr(pi)):

   =========  ==========  ===============  ===================  =======================
   run        Q           R                c (bonus coeff.)     e (entropy), tau
   =========  ==========  ===============  ===================  =======================
   OPSE       Q_r         reward           +C_r (optimism)      kappa, 1 + kappa log A
   OPSE       Q_d         B_d b            +C_d                 0, B_d
   OPSE       Q_u         utility          -C_u (pessimism)     0, 1
   Ghosh      Q_r         reward           +C_r                 0, 1
   Ghosh      Q_u         utility          +C_u (optimism)      0, 1
   =========  ==========  ===============  ===================  =======================

   (Ghosh has no Q_d: weight 0.) ``entr(p) = -p log p`` enters V' weighted by pi, exactly as the
   official ``compute_Q_h`` writes it.
4. lambda: 20 bisection steps on [0, C_lambda] for the smallest lambda whose *estimated* utility
   sum_s mu(s) sum_a pi Q_u >= b; the policy is pi at the upper end. OPSE only: when that
   estimated utility is still < b the known safe policy pi_sf is deployed instead.

The pessimistic Q_u (a lower confidence bound on V_u) and the safe-policy fallback are what make
OPSE's episodes feasible; the Ghosh baseline's optimistic Q_u lets it violate.

Batching: all runs advance in lockstep; every array has a leading run axis. The 20 bisection
steps are replayed exactly from evaluations on a dyadic grid: a pass evaluates the 2^m - 1
interior points of the current bracket at once and then takes m bisection steps with them
(``steps_per_pass`` = m), so the result equals plain bisection (m = 1) for any m.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cmdp import CMDP, policy_values

OPSE, GHOSH = "opse", "ghosh"


@dataclass(frozen=True)
class AgentConfig:
    kind: str             # "opse" or "ghosh"
    c_r: float            # optimism coefficient of the reward bonus
    c_u: float            # OPSE: pessimism coefficient of the utility bonus; Ghosh: its optimism
    c_d: float = 0.0      # OPSE: bonus coefficient of the exploration Q_d
    b_d: float = 1.0      # OPSE: scale of the exploration reward B_d b
    kappa: float = 0.1    # softmax temperature (ent_coef)
    lam_max: float = 300.0  # C_lambda, upper end of the bisection bracket
    bisection_steps: int = 20


def _check_batch(cmdps: list[CMDP]) -> tuple[int, int, int]:
    shapes = {m.P.shape[:3] for m in cmdps}
    if len(shapes) != 1:
        raise ValueError(f"a batch needs one (H, S, A) shape, got {sorted(shapes)}")
    if any(m.safe_policy is None for m in cmdps):
        raise ValueError("every CMDP needs its threshold and safe policy (cmdp.with_threshold)")
    return shapes.pop()


def run_batch(cmdps: list[CMDP], configs: list[AgentConfig], episodes: int, seeds: list[int],
              steps_per_pass: int = 4, progress: str | None = None) -> dict[str, np.ndarray]:
    """Run one learner per (cmdp, config, seed) for ``episodes`` episodes, in lockstep.

    Returns per-episode arrays (runs x episodes): ``V_r`` and ``V_u`` (exact values of the policy
    played), ``safe`` (1 where OPSE deployed the safe policy) and ``lam`` (the multiplier used).
    Each run draws its randomness from ``np.random.default_rng(seed)`` alone, so a run's
    trajectory does not depend on what else is in the batch.
    """
    H, S, A = _check_batch(cmdps)
    B = len(cmdps)
    if not (len(configs) == len(seeds) == B):
        raise ValueError("cmdps, configs and seeds must have one entry per run")
    if any(c.bisection_steps != configs[0].bisection_steps for c in configs):
        raise ValueError("all runs of a batch share the number of bisection steps")
    if steps_per_pass < 1:
        raise ValueError(f"steps_per_pass must be >= 1, got {steps_per_pass}")
    P = np.stack([m.P for m in cmdps])                         # (B, H, S, A, S)
    RU = np.stack([np.stack([m.r, m.u]) for m in cmdps])       # (B, 2, H, S, A)
    mu = np.stack([m.mu for m in cmdps])                       # (B, S)
    thr = np.array([m.threshold for m in cmdps])               # (B,)
    safe_pol = np.stack([m.safe_policy for m in cmdps])        # (B, H, S, A)
    start = np.array([int(np.argmax(m.mu)) for m in cmdps])    # the generators start in one state
    cumP = np.cumsum(P, axis=-1)
    cfg = _Coefficients(configs, H, A)
    feats = _Features(cmdps, H, S, A)
    U = np.stack([np.random.default_rng(s).random((episodes, H, 2)) for s in seeds])  # (B, K, H, 2)
    out = {k: np.zeros((B, episodes)) for k in ("V_r", "V_u", "safe", "lam")}
    pol = safe_pol.copy()                                      # the official first policy
    lam_used = np.zeros(B)
    deployed_safe = np.ones(B)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=episodes, desc=progress, mininterval=2.0, leave=False)
    rows = np.arange(B)
    for k in range(episodes):
        vals = policy_values(P, pol, RU, mu)                   # (B, 2) exact values of pi_k
        out["V_r"][:, k], out["V_u"][:, k] = vals[:, 0], vals[:, 1]
        out["safe"][:, k], out["lam"][:, k] = deployed_safe, lam_used
        # one episode of every run
        s = start.copy()
        sa = np.empty((B, H), dtype=np.int64)
        nxt = np.empty((B, H), dtype=np.int64)
        for h in range(H):
            cdf = np.cumsum(pol[rows, h, s], axis=-1)
            a = np.minimum((U[:, k, h, 0:1] > cdf).sum(axis=-1), A - 1)
            s2 = np.minimum((U[:, k, h, 1:2] > cumP[rows, h, s, a]).sum(axis=-1), S - 1)
            sa[:, h], nxt[:, h] = s * A + a, s2
            s = s2
        bonus, P_hat = feats.update(sa, nxt)                   # (B, H, S, A), (B, H, S, A, S)
        pol, util_hat, lam_used = _plan(P_hat, bonus, RU, mu, thr, cfg, steps_per_pass)
        fallback = cfg.is_opse & (util_hat < thr)
        pol[fallback] = safe_pol[fallback]
        deployed_safe = fallback.astype(float)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out


class _Coefficients:
    """Per-run constants as arrays shaped for the planning pass (B, ..., 3 Q-types)."""

    def __init__(self, configs: list[AgentConfig], H: int, A: int):
        for c in configs:
            if c.kind not in (OPSE, GHOSH):
                raise ValueError(f"agent kind must be {OPSE!r} or {GHOSH!r}, got {c.kind!r}")
        opse = np.array([c.kind == OPSE for c in configs])
        self.is_opse = opse
        kappa = np.array([c.kappa for c in configs])
        c_r = np.array([c.c_r for c in configs])
        c_d = np.array([c.c_d if c.kind == OPSE else 0.0 for c in configs])
        c_u = np.array([-c.c_u if c.kind == OPSE else c.c_u for c in configs])
        b_d = np.array([c.b_d if c.kind == OPSE else 0.0 for c in configs])
        e_r = np.where(opse, kappa, 0.0)
        # coefficient of the bonus inside the clip, per Q-type (r, d, u): (B, 3)
        self.coef = np.stack([c_r, c_d, c_u], axis=1)
        self.b_d = b_d
        self.entropy = np.stack([e_r, np.zeros_like(e_r), np.zeros_like(e_r)], axis=1)   # (B, 3)
        tau = np.stack([1 + e_r * np.log(A), np.where(opse, b_d, 1.0), np.ones_like(e_r)], axis=1)
        self.tau = tau                                                                   # (B, 3)
        self.w_d = np.where(opse, 1.0, 0.0)
        self.kappa = kappa
        self.lam_max = np.array([c.lam_max for c in configs])
        self.steps = configs[0].bisection_steps
        self.H, self.A = H, A


class _Features:
    """Lambda_h^-1, sum phi 1[s'], bonuses and the least-squares kernel for every run."""

    def __init__(self, cmdps: list[CMDP], H: int, S: int, A: int):
        self.H, self.S, self.A = H, S, A
        self.B = len(cmdps)
        groups: dict[int, list[int]] = {}
        for i, m in enumerate(cmdps):
            groups.setdefault(m.d, []).append(i)
        self.groups = []
        for d, idx in groups.items():
            phi = np.stack([cmdps[i].phi for i in idx])                       # (b, SA, d)
            self.groups.append({"idx": np.array(idx), "phi": phi,
                                "Linv": np.broadcast_to(np.eye(d), (len(idx), H, d, d)).copy(),
                                "ephi": np.zeros((len(idx), H, S, d))})

    def update(self, sa: np.ndarray, nxt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        H, S, A, B = self.H, self.S, self.A, self.B
        bonus = np.empty((B, H, S, A))
        P_hat = np.empty((B, H, S, A, S))
        hh = np.arange(H)
        for g in self.groups:
            idx, phi, Linv, ephi = g["idx"], g["phi"], g["Linv"], g["ephi"]
            b = len(idx)
            f = phi[np.arange(b)[:, None], sa[idx]]                           # (b, H, d)
            Lf = np.einsum("bhde,bhe->bhd", Linv, f)
            Linv -= Lf[..., :, None] * Lf[..., None, :] / (1.0 + np.einsum("bhd,bhd->bh", f, Lf))[..., None, None]
            ephi[np.arange(b)[:, None], hh[None, :], nxt[idx]] += f
            quad = np.einsum("bkd,bhde,bke->bhk", phi, Linv, phi)
            bonus[idx] = np.sqrt(np.maximum(quad, 0.0)).reshape(b, H, S, A)
            mu_hat = ephi @ Linv                                              # (b, H, S', d)
            P_hat[idx] = np.einsum("bkd,bhtd->bhkt", phi, mu_hat).reshape(b, H, S, A, S)
        return bonus, P_hat


def _plan(P_hat, bonus, RU, mu, thr, cfg: _Coefficients, m: int):
    """Bisection on lambda (replayed from grid passes) and the final softmax policy.

    Returns (policy (B, H, S, A), its estimated utility (B,), lambda (B,))."""
    B = P_hat.shape[0]
    ep = _EpisodeModel(P_hat, bonus, RU, mu, cfg)
    lo = np.zeros(B)
    hi = cfg.lam_max.copy()
    left = cfg.steps
    rows = np.arange(B)
    while left > 0:
        t = min(m, left)
        G = 2 ** t
        grid = lo[:, None] + (hi - lo)[:, None] * (np.arange(1, G) / G)[None, :]     # (B, G-1)
        util, _ = ep.softmax_pass(grid, want_policy=False)
        ok = util >= thr[:, None]
        jlo = np.zeros(B, dtype=np.int64)
        jhi = np.full(B, G, dtype=np.int64)
        for _ in range(t):                                    # plain bisection on the grid's results
            jm = (jlo + jhi) // 2
            safe = ok[rows, jm - 1]
            jhi = np.where(safe, jm, jhi)
            jlo = np.where(safe, jlo, jm)
        width = hi - lo
        lo, hi = lo + width * jlo / G, lo + width * jhi / G
        left -= t
    util, pol = ep.softmax_pass(hi[:, None])
    return pol[:, 0], util[:, 0], hi


class _EpisodeModel:
    """What every softmax pass of one planning step shares, laid out with the action axis ahead
    of the run axis (small reductions over actions are then sums of contiguous slices): P_hat
    per h as (1, A, B, S, S'), per-type rewards and in-clip bonuses as (3, A, B, S, 1) with the
    Q-types (r, d, u) first."""

    def __init__(self, P_hat, bonus, RU, mu, cfg: _Coefficients):
        B, H, S, A, _ = P_hat.shape
        self.B, self.H, self.S, self.A = B, H, S, A
        self.PH = [np.ascontiguousarray(P_hat[:, h].transpose(2, 0, 1, 3))[None] for h in range(H)]
        coef = cfg.coef.T[:, None, :, None, None]                                 # (3, 1, B, 1, 1)
        self.CB, self.R, self.ub = [], [], []
        for h in range(H):
            b = bonus[:, h].transpose(2, 0, 1)[..., None]                          # (A, B, S, 1)
            self.CB.append(coef * b[None])
            self.R.append(np.stack([RU[:, 0, h].transpose(2, 0, 1)[..., None],
                                    cfg.b_d[None, :, None, None] * b,
                                    RU[:, 1, h].transpose(2, 0, 1)[..., None]]))
            self.ub.append((cfg.tau.T * (H - h))[:, None, :, None, None])          # (3, 1, B, 1, 1)
        self.mu = mu
        self.cfg = cfg

    def softmax_pass(self, lam: np.ndarray, want_policy: bool = True):
        """Backward pass of the softmax policy for every run and every lambda in ``lam`` (B, G).

        Returns (estimated utility sum_s mu(s) sum_a pi_0 Q_u,0 (B, G), policy (B, G, H, S, A) or None)."""
        B, H, S, A, cfg = self.B, self.H, self.S, self.A, self.cfg
        G = lam.shape[1]
        inv_k = (1.0 / cfg.kappa)[:, None, None]                               # (B, 1, 1)
        wd_k = cfg.w_d[:, None, None] * inv_k
        lam_k = lam[:, None, :] * inv_k                                        # (B, 1, G)
        e_r = cfg.entropy[:, 0][:, None, None]                                 # (B, 1, 1)
        # V' at h = H: Q = 0 under the uniform policy, plus the entropy term of the official code
        V = np.broadcast_to((cfg.entropy.T * (np.log(A) / A))[:, None, :, None, None], (3, 1, B, S, G))
        pols = np.empty((B, G, H, S, A)) if want_policy else None
        for h in range(H - 1, -1, -1):
            Q = np.matmul(self.PH[h], V)                                       # (3, A, B, S, G)
            Q += self.CB[h]
            np.maximum(Q, 0.0, out=Q)
            np.minimum(Q, self.ub[h], out=Q)
            Q += self.R[h]
            Z = Q[0] * inv_k + Q[1] * wd_k + Q[2] * lam_k                      # logits (A, B, S, G)
            Z -= Z.max(axis=0)
            pol = np.exp(Z)
            tot = pol.sum(axis=0)
            pol /= tot
            Z -= np.log(tot)                                                   # log pi
            if want_policy:
                pols[:, :, h] = pol.transpose(1, 3, 2, 0)
            # the official regulariser sum_a pi entr(pi) = -sum_a pi^2 log pi, on Q_r only
            Vn = (pol * Q).sum(axis=1)                                         # (3, B, S, G)
            Z *= pol
            Z *= pol
            Vn[0] -= e_r * Z.sum(axis=0)
            V = Vn[:, None]
        util = np.einsum("bs,bsg->bg", self.mu, V[2, 0])                       # V_u at h = 0 (no entropy)
        return util, pols
