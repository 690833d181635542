"""cdc_gs renderer benchmark: the matrix form of the splat weights (splat.weights, one product
[x^2, xy, y^2, x, y, 1] @ coefficients) against the textbook elementwise formula
(splat.weights_direct), forward + backward on one thread, in one run; prints both CPU times per
step, their ratio and the largest difference. (gsplat, the maintained library, needs CUDA and does
not run here, so our renderer is compared with itself.) Run: nice -n 19 python -m benchmarks.cdc_gs.renderer
``--smoke`` runs it at tiny sizes in seconds (what CI runs): 20 splats, 12x12 pixels, 2 steps."""
from __future__ import annotations

import argparse
import time

import torch

from stages.cdc_gs.splat import pixel_grid, weights, weights_direct
from stages.common.device import limit_threads


def main(n: int = 200, size: int = 48, reps: int = 30) -> None:
    limit_threads(1)
    g = torch.Generator().manual_seed(0)
    grid = pixel_grid(size, size)
    p = {"mu": torch.rand(n, 2, generator=g) * size, "log_scale": torch.rand(n, 2, generator=g) * 2 - 0.5,
         "theta": torch.rand(n, generator=g) * 3, "color": torch.rand(n, 1, generator=g),
         "opacity_logit": torch.randn(n, generator=g)}
    target = torch.rand(size * size, 1, generator=g)
    out = {}
    for f in (weights, weights_direct):
        q = {k: v.clone().requires_grad_(True) for k, v in p.items()}
        t0 = time.process_time()
        for _ in range(reps):
            loss = ((f(q, grid).T @ q["color"] - target) ** 2).mean()
            loss.backward()
        out[f.__name__] = (time.process_time() - t0) / reps
    diff = (weights(p, grid) - weights_direct(p, grid)).abs().max().item()
    print(f"n={n}, {size}x{size}: matrix form {1e3 * out['weights']:.2f} ms/step, direct "
          f"{1e3 * out['weights_direct']:.2f} ms/step, ratio direct/matrix {out['weights_direct'] / out['weights']:.1f}x; "
          f"max |difference| {diff:.1e}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    if ap.parse_args().smoke:
        main(n=20, size=12, reps=2)
    else:
        main()
