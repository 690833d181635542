"""Full-batch SGNS and its quartic approximation in torch (tied embeddings, one matrix W).

Both losses sum over every word pair (i, j) of the vocabulary, with the positive pairs weighted
by their co-occurrence frequency P_ij, the negative pairs by P_i P_j (one negative per positive,
``ns_weight = 1``) and every pair by q_ij = 1 / (P_ij + P_i P_j) (the official code's
"omniscient" reweighting), so one step is the expected minibatch step of the official code:

    SGNS     l+(x) = 2 (log(1 + e^-x) - log 2),  l-(x) = 2 (log(1 + e^x) - log 2)
    quartic  l+(x) = -x + x^2 / 4,               l-(x) = x + x^2 / 4

The factor 2 on SGNS makes the quartic loss exactly its Taylor expansion to fourth order in W
(x = w_i . w_j is quadratic in W), so the two share learning rate, init and time axis. The
quartic gradient is computed in the factored form (W W^T - M*) W, which equals the gradient of
the pair sum above (tests check both against autograd).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

KINDS = ("quartic", "sgns")


@dataclass
class Target:
    """The corpus statistics a full-batch step needs, on one device."""

    P: torch.Tensor       # (V, V) co-occurrence frequencies, sum 1
    PP: torch.Tensor      # (V, V) P_i P_j
    q: torch.Tensor       # (V, V) pair weights 1 / (P + PP)
    M: torch.Tensor       # (V, V) M* = 2 (P - PP) / (P + PP)

    @classmethod
    def build(cls, P: np.ndarray, u: np.ndarray, device="cpu", dtype=torch.float64) -> "Target":
        Pt = torch.as_tensor(P, dtype=dtype, device=device)
        ut = torch.as_tensor(u, dtype=dtype, device=device)
        PP = torch.outer(ut, ut)
        G = Pt + PP
        return cls(Pt, PP, 1.0 / G, 2.0 * (Pt - PP) / G)


# --------------------------------------------------------------------------------------
# the losses, written pair by pair
# --------------------------------------------------------------------------------------
def quartic_loss(W: torch.Tensor, t: Target) -> torch.Tensor:
    X = W @ W.T
    return (t.q * (t.P * (-X + X * X / 4) + t.PP * (X + X * X / 4))).sum()


def sgns_loss(W: torch.Tensor, t: Target) -> torch.Tensor:
    X = W @ W.T
    log2 = math.log(2.0)
    sp = torch.nn.functional.softplus
    return (2 * t.q * (t.P * (sp(-X) - log2) + t.PP * (sp(X) - log2))).sum()


def loss(kind: str, W: torch.Tensor, t: Target) -> torch.Tensor:
    return {"quartic": quartic_loss, "sgns": sgns_loss}[kind](W, t)


# --------------------------------------------------------------------------------------
# their gradients (closed form, checked against autograd in the tests)
# --------------------------------------------------------------------------------------
def quartic_grad(W: torch.Tensor, t: Target) -> torch.Tensor:
    """(W W^T - M*) W, computed as W (W^T W) - M* W (O(V d^2 + V^2 d))."""
    return W @ (W.T @ W) - t.M @ W


def sgns_grad(W: torch.Tensor, t: Target) -> torch.Tensor:
    """(D + D^T) W with D = dL/dX = 2 q (PP sigmoid(X) - P sigmoid(-X)).

    Because q = 1 / (P + PP), D simplifies to tanh(X / 2) - M* / 2, so the gradient is
    (2 tanh(W W^T / 2) - M*) W: SGNS's stationary point is 2 tanh(x/2) = M*, i.e. x = PMI, and
    its first-order expansion is the quartic's (W W^T - M*) W.
    """
    return (2 * torch.tanh(0.5 * (W @ W.T)) - t.M) @ W


def grad(kind: str, W: torch.Tensor, t: Target) -> torch.Tensor:
    return {"quartic": quartic_grad, "sgns": sgns_grad}[kind](W, t)


# --------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------
def init_weights(V: int, d: int, scale: float, seed: int | list[int], dtype=torch.float64,
                 device="cpu") -> torch.Tensor:
    """W(0) with entries N(0, scale^2 / d) (the official code's init), from a seeded numpy RNG
    (the same W(0) on every device)."""
    rng = np.random.default_rng(seed)
    return torch.as_tensor(rng.normal(0.0, scale / math.sqrt(d), size=(V, d)), dtype=dtype, device=device)


def train(kind: str, t: Target, W0: torch.Tensor, eta: float, steps: int, log_every: int,
          U_track: torch.Tensor, d_overlap: int, progress: bool = False) -> dict[str, np.ndarray]:
    """Full-batch gradient descent W <- W - eta grad L(W) from W0 for ``steps`` steps.

    Every ``log_every`` steps (and at the last) records: the loss, the sorted squared singular
    values sigma_k^2 of W, the squared projections ||v_k^T W||^2 onto the tracked eigenvectors
    (columns of ``U_track``), and the subspace overlap of span(W) with the top ``d_overlap`` of them.
    """
    from tqdm import tqdm

    if kind not in KINDS:
        raise ValueError(f"unknown loss {kind!r}; allowed: {', '.join(KINDS)}")
    W = W0.clone()
    U_top = U_track[:, :d_overlap]
    rec = {"step": [], "loss": [], "sv2": [], "proj": [], "overlap": []}

    def record(n: int) -> None:
        with torch.no_grad():
            rec["step"].append(n)
            rec["loss"].append(float(loss(kind, W, t)))
            s = torch.linalg.svdvals(W)
            rec["sv2"].append((s * s).cpu().numpy())
            rec["proj"].append(((U_track.T @ W) ** 2).sum(1).cpu().numpy())
            # overlap of span(W) with span(U_top): ||Q^T U||_F^2 / k, Q = W's left singular
            # vectors whatever their scale (from small init W is still full rank in float64)
            Q, sv, _ = torch.linalg.svd(W, full_matrices=False)
            Q = Q[:, sv > 0]
            rec["overlap"].append(float(((Q.T @ U_top) ** 2).sum() / U_top.shape[1]))

    it = range(steps)
    if progress:
        it = tqdm(it, desc=f"{kind} full-batch GD", mininterval=1.0)
    with torch.no_grad():
        for n in it:
            if n % log_every == 0:
                record(n)
            W -= eta * grad(kind, W, t)
            if not torch.isfinite(W).all():
                raise FloatingPointError(f"{kind}: W diverged at step {n + 1} (step size {eta:g}); "
                                         "lower lr_scale")
        record(steps)
    out = {k: np.asarray(v) for k, v in rec.items()}
    out["W"] = W.cpu().numpy()
    return out
