"""Full-batch SGNS and its quartic approximation in torch (tied embeddings, one matrix W).

Both losses sum over every word pair (i, j) of the vocabulary, the positive term of a pair
weighted by A_ij and the negative term by N_ij. The study's main runs use the official code's
"omniscient" reweighting: A = P_ij q_ij, N = P_i P_j q_ij with q_ij = 1 / (P_ij + P_i P_j) (one
negative per positive, ``ns_weight = 1``), so G = A + N = 1 and one step is the expected
minibatch step of the official code. ``Target.from_weights`` takes any symmetric weights, e.g.
word2vec's own (``theory.word2vec_weights``: subsampling, unigram^0.75 negatives, k of them):

    SGNS     l+(x) = 2 (log(1 + e^-x) - log 2),  l-(x) = 2 (log(1 + e^x) - log 2)
    quartic  l+(x) = -x + x^2 / 4,               l-(x) = x + x^2 / 4

The factor 2 on SGNS makes the quartic loss exactly its Taylor expansion to fourth order in W
(x = w_i . w_j is quadratic in W), so the two share learning rate, init and time axis. The
quartic loss is sum G (W W^T - M*)^2 / 4 + const with M* = 2 (A - N) / G (the paper's
Proposition 2); its gradient is (G o (W W^T - M*)) W, computed in the factored form
(W W^T - M*) W when G = 1 (tests check both against autograd).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

KINDS = ("quartic", "sgns")


@dataclass
class Target:
    """The corpus statistics a full-batch step needs, on one device.

    ``A`` and ``N`` are the weights of every pair's positive and negative term; ``G = A + N`` and
    ``M = 2 (A - N) / G``, so the quartic loss is ``sum G (W W^T - M)^2 / 4`` up to a constant
    (the paper's Proposition 2). ``uniform``: G is 1 everywhere (the omniscient reweighting,
    Setting 3.1), so the loss is unweighted factorisation and the quartic gradient has the
    cheap factored form.
    """

    A: torch.Tensor       # (V, V) weight of the positive term of each pair
    N: torch.Tensor       # (V, V) weight of the negative term
    G: torch.Tensor       # (V, V) A + N
    M: torch.Tensor       # (V, V) M* = 2 (A - N) / (A + N)
    uniform: bool         # G == 1 everywhere

    @classmethod
    def build(cls, P: np.ndarray, u: np.ndarray, device="cpu", dtype=torch.float64) -> "Target":
        """The omniscient reweighting: A = P q, N = P_i P_j q with q = 1 / (P + P_i P_j)."""
        Pt = torch.as_tensor(P, dtype=dtype, device=device)
        ut = torch.as_tensor(u, dtype=dtype, device=device)
        PP = torch.outer(ut, ut)
        q = 1.0 / (Pt + PP)
        return cls(Pt * q, PP * q, torch.ones_like(Pt), 2.0 * (Pt - PP) * q, True)

    @classmethod
    def from_weights(cls, A: np.ndarray, N: np.ndarray, device="cpu", dtype=torch.float64) -> "Target":
        """Any symmetric pair weights (e.g. word2vec's, ``theory.word2vec_weights``)."""
        At = torch.as_tensor(A, dtype=dtype, device=device)
        Nt = torch.as_tensor(N, dtype=dtype, device=device)
        G = At + Nt
        M = torch.where(G > 0, 2.0 * (At - Nt) / torch.where(G > 0, G, 1.0), 0.0)
        return cls(At, Nt, G, M, False)


# --------------------------------------------------------------------------------------
# the losses, written pair by pair
# --------------------------------------------------------------------------------------
def quartic_loss(W: torch.Tensor, t: Target) -> torch.Tensor:
    X = W @ W.mT
    return (t.A * (-X + X * X / 4) + t.N * (X + X * X / 4)).sum((-2, -1))


def sgns_loss(W: torch.Tensor, t: Target) -> torch.Tensor:
    X = W @ W.mT
    log2 = math.log(2.0)
    sp = torch.nn.functional.softplus
    return (2 * (t.A * (sp(-X) - log2) + t.N * (sp(X) - log2))).sum((-2, -1))


def loss(kind: str, W: torch.Tensor, t: Target) -> torch.Tensor:
    return {"quartic": quartic_loss, "sgns": sgns_loss}[kind](W, t)


# --------------------------------------------------------------------------------------
# their gradients (closed form, checked against autograd in the tests)
# --------------------------------------------------------------------------------------
def quartic_grad(W: torch.Tensor, t: Target) -> torch.Tensor:
    """(G o (W W^T - M*)) W; with G = 1 computed as W (W^T W) - M* W (O(V d^2 + V^2 d))."""
    if t.uniform:
        return W @ (W.mT @ W) - t.M @ W
    return (t.G * (W @ W.mT - t.M)) @ W


def sgns_grad(W: torch.Tensor, t: Target) -> torch.Tensor:
    """(D + D^T) W with D = dL/dX = 2 (N sigmoid(X) - A sigmoid(-X)) = G o (tanh(X / 2) - M* / 2).

    So the gradient is (G o (2 tanh(W W^T / 2) - M*)) W: SGNS's stationary point is
    2 tanh(x/2) = M*, i.e. x = log(A / N) (PMI for the omniscient weights), and its first-order
    expansion is the quartic's (G o (W W^T - M*)) W.
    """
    D = 2 * torch.tanh(0.5 * (W @ W.mT)) - t.M
    return (D if t.uniform else t.G * D) @ W


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


def stack_targets(targets: list["Target"]) -> "Target":
    """Several seeds' targets (same vocabulary size) as one with a leading seed dimension."""
    if len({tuple(t.M.shape) for t in targets}) != 1:
        raise ValueError("targets of one batch need the same vocabulary size: "
                         f"{sorted({tuple(t.M.shape) for t in targets})}")
    if len({t.uniform for t in targets}) != 1:
        raise ValueError("targets of one batch are all uniform (omniscient) or all weighted")
    return Target(*(torch.stack([getattr(t, f) for t in targets]) for f in ("A", "N", "G", "M")),
                  targets[0].uniform)


def train(kind: str, t: Target, W0: torch.Tensor, eta, steps: int, log_every: int,
          U_track: torch.Tensor, d_overlap: int, progress: bool = False) -> dict[str, np.ndarray]:
    """Full-batch gradient descent W <- W - eta grad L(W) from W0 for ``steps`` steps.

    Every ``log_every`` steps (and at the last) records: the loss, the sorted squared singular
    values sigma_k^2 of W, the squared projections ||v_k^T W||^2 onto the tracked eigenvectors
    (columns of ``U_track``), and the subspace overlap of span(W) with the top ``d_overlap`` of them.

    One seed: ``W0`` (V, d), ``t``'s matrices (V, V), ``U_track`` (V, K), ``eta`` a number. Several
    seeds at once (a seed dimension): ``W0`` (S, V, d), ``t`` from :func:`stack_targets` (S, V, V),
    ``U_track`` (S, V, K), ``eta`` S numbers; each seed's slice follows its own step and every
    array of the result has a leading seed dimension (``step`` excepted).
    """
    from tqdm import tqdm

    if kind not in KINDS:
        raise ValueError(f"unknown loss {kind!r}; allowed: {', '.join(KINDS)}")
    W = W0.clone()
    batched = W.dim() == 3
    if batched:
        eta_t = torch.as_tensor(np.asarray(eta, dtype=np.float64), dtype=W.dtype, device=W.device)
        if eta_t.shape != (W.shape[0],):
            raise ValueError(f"a batch of {W.shape[0]} seeds needs {W.shape[0]} step sizes, got {list(eta_t.shape)}")
        eta_t = eta_t[:, None, None]
    else:
        eta_t = float(eta)
    U_top = U_track[..., :d_overlap]
    rec = {"step": [], "loss": [], "sv2": [], "proj": [], "overlap": []}

    def record(n: int) -> None:
        with torch.no_grad():
            rec["step"].append(n)
            X = W @ W.mT
            rec["loss"].append(_loss_of(kind, X, t).cpu().numpy())
            s = torch.linalg.svdvals(W)
            rec["sv2"].append((s * s).cpu().numpy())
            rec["proj"].append(((U_track.mT @ W) ** 2).sum(-1).cpu().numpy())
            # overlap of span(W) with span(U_top): ||Q^T U||_F^2 / k, Q = W's left singular
            # vectors whatever their scale (from small init W is still full rank in float64)
            Q, sv, _ = torch.linalg.svd(W, full_matrices=False)
            Q = Q * (sv > 0).to(Q.dtype)[..., None, :]
            rec["overlap"].append((((Q.mT @ U_top) ** 2).sum((-2, -1)) / U_top.shape[-1]).cpu().numpy())

    it = range(steps)
    if progress:
        it = tqdm(it, desc=f"{kind} full-batch GD" + (f" ({W.shape[0]} seeds)" if batched else ""),
                  mininterval=1.0)
    with torch.no_grad():
        for n in it:
            if n % log_every == 0:
                record(n)
            W -= eta_t * grad(kind, W, t)
            if not torch.isfinite(W).all():
                raise FloatingPointError(f"{kind}: W diverged at step {n + 1} (step size {eta}); "
                                         "lower lr_scale")
        record(steps)
    out = {k: np.stack(v, axis=1 if batched and k != "step" else 0) if k != "step" else np.asarray(v)
           for k, v in rec.items()}
    out["W"] = W.cpu().numpy()
    return out


def _loss_of(kind: str, X: torch.Tensor, t: Target) -> torch.Tensor:
    """The loss from the Gram matrix X = W W^T, summed over the last two dimensions."""
    if kind == "quartic":
        return (t.A * (-X + X * X / 4) + t.N * (X + X * X / 4)).sum((-2, -1))
    log2 = math.log(2.0)
    sp = torch.nn.functional.softplus
    return (2 * (t.A * (sp(-X) - log2) + t.N * (sp(X) - log2))).sum((-2, -1))


def split_seeds(res: dict[str, np.ndarray], n: int) -> list[dict[str, np.ndarray]]:
    """A batched result of :func:`train` as one result per seed."""
    return [{k: (v if k == "step" else v[i]) for k, v in res.items()} for i in range(n)]
