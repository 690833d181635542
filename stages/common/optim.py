"""Adam without ``torch.optim``.

Constructing any ``torch.optim.Optimizer`` imports ``torch._dynamo``: 1.2-1.6 s of CPU on 2 cores,
more than a whole smoke training in several studies. :class:`Adam` runs the same tensor operations
in the same order as ``torch.optim.Adam``'s single-tensor CPU path (the default off CUDA), so the
weights it gives are the same bit for bit (tests/common/test_optim.py checks, with weight decay and
with a parameter that has no gradient on some steps). ``benchmarks/common/adam.py`` prints the CPU saved.
On a GPU, use ``torch.optim.Adam``: its fused and foreach paths differ from this one in the last bits.
"""
from __future__ import annotations


class Adam:
    """Adam (Kingma & Ba), torch's defaults: betas (0.9, 0.999), eps 1e-8, L2 ``weight_decay``
    added to the gradient (as ``torch.optim.Adam``, not AdamW), no amsgrad. Parameters that do not
    require a gradient are left out; one whose ``grad`` is None on a step is skipped and its step
    count (bias correction) does not advance, as in torch."""

    def __init__(self, params, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        import torch

        if not lr > 0:
            raise ValueError(f"Adam: lr must be > 0, got {lr}")
        if not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"Adam: betas must be in [0, 1), got {betas}")
        if eps < 0 or weight_decay < 0:
            raise ValueError(f"Adam: eps and weight_decay must be >= 0, got {eps}, {weight_decay}")
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("Adam: no parameter requires a gradient")
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.steps = [0] * len(self.params)
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        import torch

        b1, b2 = self.betas
        with torch.no_grad():
            for i, (p, m1, m2) in enumerate(zip(self.params, self.exp_avg, self.exp_avg_sq)):
                if p.grad is None:
                    continue
                g = p.grad if self.weight_decay == 0 else p.grad.add(p, alpha=self.weight_decay)
                self.steps[i] += 1
                bias1, bias2 = 1 - b1 ** float(self.steps[i]), 1 - b2 ** float(self.steps[i])
                m1.lerp_(g, 1 - b1)
                m2.mul_(b2).addcmul_(g, g.conj(), value=1 - b2)
                p.addcdiv_(m1, (m2.sqrt() / bias2 ** 0.5).add_(self.eps), value=-(self.lr / bias1))
