"""cdc_gs calibration: steps/s of the 2-D splat fit, and the must check (CDC PSNR > ADC PSNR at an
equal count) at candidate sizes; plus settings where it should fail (a flat image, CDC with the
consistency step off). Run: nice -n 19 python -m benchmarks.cdc_gs_calibration [size n steps]"""
from __future__ import annotations

import sys
import time

import numpy as np
import torch

from stages.cdc_gs.splat import FitConfig, Fitter


def load(name, size):
    from skimage import color, data, transform
    img = getattr(data, name)()
    if img.ndim == 3:
        img = color.rgb2gray(img[..., :3])
    img = img.astype(np.float64)
    if img.max() > 1.5:
        img = img / 255.0
    h, w = img.shape
    s = min(h, w)
    img = img[(h - s) // 2:(h - s) // 2 + s, (w - s) // 2:(w - s) // 2 + s]
    return transform.resize(img, (size, size), anti_aliasing=True).astype(np.float32)


def psnr_ssim(a, b):
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity
    a = np.clip(a[..., 0], 0, 1)
    return peak_signal_noise_ratio(b, a, data_range=1.0), structural_similarity(b, a, data_range=1.0)


def main():
    torch.set_num_threads(1)
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 600
    names = sys.argv[4].split(",") if len(sys.argv) > 4 else ["camera", "astronaut", "coffee", "brick", "grass"]
    dfrac = float(sys.argv[5]) if len(sys.argv) > 5 else 0.05
    cfg = FitConfig(n_target=n, init_fraction=0.25, steps=steps, densify_from=steps // 12,
                    densify_every=max(1, steps // 24), densify_until=steps // 2, lr_mu=0.05 * size / 64,
                    lr_scale=0.02, lr_theta=0.02, lr_color=0.02, lr_opacity=0.02, clone_max_scale=1.0,
                    min_opacity=0.005, cdc_densify_fraction=dfrac, cdc_prune_fraction=dfrac)
    for name in names:
        img = (load(name, size) if name not in ("flat", "noise") else np.full((size, size), 0.5, np.float32)
               if name == "flat" else np.random.default_rng(0).random((size, size)).astype(np.float32))
        row = [name]
        for method, cx in (("adc", "wavelet"), ("cdc", "wavelet"), ("cdc", "shuffled")):
            f = Fitter(img, cfg, method, seed=0, complexity=cx)
            t0 = time.process_time()
            f.fit()
            dt = time.process_time() - t0
            p, s = psnr_ssim(f.render().detach().numpy(), img)
            row.append(f"{method}/{cx[:4]}: n={f.n} psnr={p:.2f} ssim={s:.3f} cpu={dt:.1f}s ({steps / dt:.0f} st/s)")
        print(" | ".join(row), flush=True)


if __name__ == "__main__":
    main()
