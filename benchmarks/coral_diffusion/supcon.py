"""coral_diffusion re-implements the supervised contrastive loss (stages/coral_diffusion/ddpm.supcon_loss)
that the authors take from pytorch-metric-learning (losses.SupConLoss). This prints, in one run, the
largest difference of the two losses and of their gradients over random batches, and the CPU time of
each (forward + backward, the training step's use), with the ratio.

    nice -n 19 python -m benchmarks.coral_diffusion.supcon --batches 300

``--smoke`` runs it at tiny sizes in seconds (what CI runs): 3 batches of 16.
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=300)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--temperature", type=float, default=0.1)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # tiny sizes; options given explicitly still win
        ap.set_defaults(batches=3, batch=16)
        a = ap.parse_args()

    import torch

    from stages.common.device import limit_threads

    limit_threads(1)
    from pytorch_metric_learning import losses

    from stages.coral_diffusion.ddpm import supcon_loss

    lib = losses.SupConLoss(temperature=a.temperature)
    g = torch.Generator().manual_seed(0)
    batches = [(torch.randn(a.batch, a.dim, generator=g), torch.randint(0, 10, (a.batch,), generator=g))
               for _ in range(a.batches)]

    def ours(z, y):
        return supcon_loss(z, y, a.temperature)

    def theirs(z, y):
        return lib(torch.nn.functional.normalize(z, dim=-1), y)

    worst_loss = worst_grad = 0.0
    for z, y in batches[:20]:
        z1, z2 = z.clone().requires_grad_(), z.clone().requires_grad_()
        l1, l2 = ours(z1, y), theirs(z2, y)
        l1.backward()
        l2.backward()
        worst_loss = max(worst_loss, abs(l1.item() - l2.item()))
        worst_grad = max(worst_grad, (z1.grad - z2.grad).abs().max().item())
    times = {}
    for name, fn in (("ours", ours), ("pytorch-metric-learning", theirs)):
        t0 = time.process_time()
        for z, y in batches:
            z = z.clone().requires_grad_()
            fn(z, y).backward()
        times[name] = time.process_time() - t0
    print(f"{a.batches} batches of {a.batch} x {a.dim}, temperature {a.temperature}: largest |loss difference| "
          f"{worst_loss:.2e}, largest |gradient difference| {worst_grad:.2e}")
    print(f"CPU s (forward + backward): ours {times['ours']:.3f}, pytorch-metric-learning "
          f"{times['pytorch-metric-learning']:.3f}; ratio library / ours = "
          f"{times['pytorch-metric-learning'] / times['ours']:.2f}")


if __name__ == "__main__":
    main()
