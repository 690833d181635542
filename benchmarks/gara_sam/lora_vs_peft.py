"""gara_sam: our gated adapter with the gate forced open against peft's LoRA (the library it
re-implements), in one run: the largest output difference for the same weights, and the CPU time of
training steps (forward + backward + Adam) on the same U-Net and batch, with their ratio.
Also our per-image IoU against scikit-learn's jaccard_score.

    nice -n 19 python -m benchmarks.gara_sam.lora_vs_peft [--steps 100]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): 2 training steps, the IoU on 20 images.
"""
from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.gara_sam.net import ADAPTED, UNet, get_module, add_gated, iou_per_image, peft_lora, train_loop


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    n_iou = 200
    if a.smoke:
        a.steps, n_iou = 2, 20
    limit_threads(1)
    torch.manual_seed(0)
    base = UNet(8).eval()
    ours, theirs = copy.deepcopy(base), copy.deepcopy(base)
    gated = add_gated(ours, a.rank, float(a.rank), "open")
    t0 = time.process_time()
    pm = peft_lora(theirs, a.rank, float(a.rank))
    peft_setup = time.process_time() - t0
    for name, g in zip(ADAPTED, gated):
        torch.nn.init.normal_(g.lora_B.weight, 0, 0.1)
        layer = get_module(pm.base_model.model, name)
        layer.lora_A["default"].weight.data.copy_(g.lora_A.weight)
        layer.lora_B["default"].weight.data.copy_(g.lora_B.weight)
    x = torch.rand(32, 3, 32, 32)
    y = (torch.rand(32, 1, 32, 32) > 0.5).float()
    with torch.no_grad():
        diff = float((ours.eval()(x) - pm.eval()(x)).abs().max())
    times = {}
    for name, model, params in (("ours (gate open)", ours, [q for q in ours.parameters() if q.requires_grad]),
                                ("peft LoRA", pm, [q for q in pm.parameters() if q.requires_grad])):
        t0 = time.process_time()
        train_loop(model, params, x, y, a.steps, 32, 1e-3, torch.Generator().manual_seed(0), progress=False)
        times[name] = time.process_time() - t0
    print(f"max |ours - peft| on the same weights: {diff:.2e}")
    for k, v in times.items():
        print(f"{k:18s} {a.steps} steps: {v:.2f} CPU s ({a.steps / v:.1f} steps/s)")
    print(f"ratio ours / peft CPU time: {times['ours (gate open)'] / times['peft LoRA']:.2f}"
          f"  (peft's import and wrapping, once: {peft_setup:.2f} CPU s)")
    from sklearn.metrics import jaccard_score

    rng = np.random.default_rng(0)
    p, m = rng.random((n_iou, 1, 32, 32)) > 0.5, rng.random((n_iou, 1, 32, 32)) > 0.6
    t0 = time.process_time()
    ours_iou = iou_per_image(p, m)
    t_ours = time.process_time() - t0
    t0 = time.process_time()
    ref = np.array([jaccard_score(m[i].ravel(), p[i].ravel()) for i in range(len(p))])
    t_ref = time.process_time() - t0
    print(f"IoU: max |ours - sklearn jaccard_score| = {np.abs(ours_iou - ref).max():.1e}; "
          f"CPU {t_ours * 1e3:.1f} ms vs {t_ref * 1e3:.0f} ms (ratio {t_ours / t_ref:.3f})")


if __name__ == "__main__":
    main()
