"""The full d×d linear bigram model in torch, trained by GD, sign descent and Adam.

The loss is computed from the corpus's sufficient statistics (X^T X / n = diag(pi),
X^T Y / n = diag(pi) P, Y^T Y / n has trace 1), which equals ||XW - Y||_F^2 / 2n on the
one-hot token pairs exactly (tests/zipf_bigram check this on a sampled corpus).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class BigramStats:
    pi: torch.Tensor   # (d,) input-token frequencies
    P: torch.Tensor    # (d, d) conditional frequencies, rows sum to 1 where pi > 0

    @property
    def d(self) -> int:
        return int(self.pi.numel())

    def loss(self, W: torch.Tensor) -> torch.Tensor:
        """||XW - Y||_F^2 / 2n."""
        pi = self.pi[:, None]
        return 0.5 * (pi * W * W).sum() - (pi * W * self.P).sum() + 0.5

    def optimum(self) -> torch.Tensor:
        return self.loss(self.P)


def permuted_power_law(pi: np.ndarray, q: np.ndarray, seed: int, device="cpu",
                       dtype=torch.float64) -> BigramStats:
    """P[i, sigma_i(k)] = q_k with an independent seeded permutation sigma_i per row."""
    d = len(pi)
    g = torch.Generator().manual_seed(int(seed))
    perms = torch.argsort(torch.rand(d, d, generator=g), dim=1)
    P = torch.empty(d, d, dtype=dtype)
    P.scatter_(1, perms, torch.as_tensor(q, dtype=dtype).expand(d, d).contiguous())
    return BigramStats(torch.as_tensor(pi, dtype=dtype).to(device), P.to(device))


def from_pairs(x: np.ndarray, y: np.ndarray, d: int, dtype=torch.float64) -> BigramStats:
    """Empirical statistics of a corpus of (x, y) token pairs."""
    counts = torch.zeros(d, d, dtype=dtype)
    counts.index_put_((torch.as_tensor(x, dtype=torch.long), torch.as_tensor(y, dtype=torch.long)),
                      torch.ones(len(x), dtype=dtype), accumulate=True)
    rows = counts.sum(1)
    pi = rows / rows.sum()
    P = torch.where(rows[:, None] > 0, counts / rows.clamp_min(1)[:, None], torch.zeros_like(counts))
    return BigramStats(pi, P)


def one_hot_loss(W: torch.Tensor, x: np.ndarray, y: np.ndarray) -> torch.Tensor:
    """The paper's loss written literally, ||XW - Y||_F^2 / 2n, for small corpora."""
    d = W.shape[0]
    X = torch.nn.functional.one_hot(torch.as_tensor(x, dtype=torch.long), d).to(W.dtype)
    Y = torch.nn.functional.one_hot(torch.as_tensor(y, dtype=torch.long), d).to(W.dtype)
    return ((X @ W - Y) ** 2).sum() / (2 * len(x))


def gradient(stats: BigramStats, W: torch.Tensor) -> torch.Tensor:
    """dL/dW = diag(pi) (W - P): what autograd gives for ``stats.loss`` (checked in tests),
    written out so one step costs two passes over W instead of a graph."""
    return stats.pi[:, None] * (W - stats.P)


def excess_loss(stats: BigramStats, W: torch.Tensor) -> float:
    """L(W) - L* = 1/2 sum_i pi_i ||W_i - P_i||^2, without the cancellation of L(W) - L*."""
    R = W - stats.P
    return 0.5 * float(stats.pi @ (R * R).sum(1))


@torch.no_grad()
def train(stats: BigramStats, optimizer: str, steps: int, lr: float,
          betas: tuple[float, float] = (0.9, 0.999), adam_eps: float = 1e-8) -> np.ndarray:
    """Full-batch training from W = 0; returns the relative error after each of 0..steps iterations.

    optimizer: "gd" (torch.optim.SGD with step lr), "sign" (W <- W - lr * sign(grad)),
    "adam" (torch.optim.Adam).
    """
    W = torch.zeros_like(stats.P)
    denom = excess_loss(stats, W)
    if optimizer == "gd":
        opt = torch.optim.SGD([W], lr=lr)
    elif optimizer == "adam":
        opt = torch.optim.Adam([W], lr=lr, betas=betas, eps=adam_eps)
    elif optimizer == "sign":
        opt = None
    else:
        raise ValueError(f"unknown optimizer {optimizer!r}; allowed: gd, sign, adam")
    rel = np.empty(steps + 1)
    for t in range(steps + 1):
        rel[t] = excess_loss(stats, W) / denom
        if t == steps:
            break
        grad = gradient(stats, W)
        if opt is None:
            W.sub_(torch.sign(grad), alpha=lr)
        else:
            W.grad = grad
            opt.step()
    return rel
