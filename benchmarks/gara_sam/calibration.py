"""Calibration of gara_sam: one seed, every arm, the must checks at the sizes given on the command line.

    nice -n 19 python -m benchmarks.gara_sam.calibration --seed 0 [--lam 0.05] [--steps 250] ...

``--smoke`` runs it at tiny sizes in seconds (what CI runs): every arm, a few scenes, 3 steps each, no
--base-cache.

Prints CPU seconds per phase, steps per CPU second, IoU (clean / mean seen / mean unseen) per arm,
GaRA's effective rank per condition and the must-check values. Arms: frozen, peft LoRA-r, GaRA-r,
GaRA-r with a constant-input gate (the input-aware ablation), full fine-tuning.
"""
from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.gara_sam.net import UNet, add_gated, iou_per_image, peft_lora, predict, train_loop
from stages.gara_sam.scenes import CONDITIONS, SEEN, UNSEEN, corrupt_batch, make_scenes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--width", type=int, default=8)
    ap.add_argument("--n-pre", type=int, default=2000)
    ap.add_argument("--pre-steps", type=int, default=500)
    ap.add_argument("--n-adapt", type=int, default=400)
    ap.add_argument("--clean-frac", type=float, default=0.25)
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--full-lr", type=float, default=1e-3)
    ap.add_argument("--r", type=int, default=8)
    ap.add_argument("--lam", type=float, default=0.05)
    ap.add_argument("--n-test", type=int, default=200)
    ap.add_argument("--arms", default="lora,gara,const,full")
    ap.add_argument("--gate-lr-mult", type=float, default=1.0)
    ap.add_argument("--base-cache", default="", help="a .pt file: load the pre-trained model from it, or save it there")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.n_pre, a.pre_steps, a.n_adapt, a.steps, a.batch, a.n_test, a.base_cache = 16, 3, 16, 3, 8, 4, ""
    limit_threads(1)
    rng = np.random.default_rng(a.seed)
    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed)
    t0 = time.process_time()
    xp, yp = make_scenes(a.n_pre, a.size, rng)
    xa, ya = make_scenes(a.n_adapt, a.size, rng, shapes=("ellipse", "rect"))
    kinds = [SEEN[i] for i in rng.integers(len(SEEN), size=a.n_adapt)]
    xa = corrupt_batch(xa, kinds, rng)
    nc = int(round(a.clean_frac * a.n_adapt))
    xc, yc = make_scenes(nc, a.size, rng, shapes=("ellipse", "rect"))
    xa, ya = np.concatenate([xa, xc]), np.concatenate([ya, yc])
    xt, yt = make_scenes(a.n_test, a.size, rng)
    test = {c: torch.from_numpy(corrupt_batch(xt, [c] * a.n_test, rng)) for c in CONDITIONS}
    print(f"data {time.process_time() - t0:.1f} CPU s")

    base = UNet(a.width)
    import os
    if a.base_cache and os.path.exists(a.base_cache):
        base.load_state_dict(torch.load(a.base_cache, weights_only=True))
        base.eval()
    else:
        t0 = time.process_time()
        L = train_loop(base, list(base.parameters()), torch.from_numpy(xp), torch.from_numpy(yp), a.pre_steps, a.batch,
                       3e-3, gen, desc="pretrain")
        dt = time.process_time() - t0
        print(f"pretrain {dt:.1f} CPU s ({a.pre_steps / dt:.1f} steps/s), loss {L[0]:.3f} -> {np.mean(L[-20:]):.3f}")
        if a.base_cache:
            torch.save(base.state_dict(), a.base_cache)
    XA, YA = torch.from_numpy(xa), torch.from_numpy(ya)

    def evaluate(model, gated=None):
        out, ranks = {}, {}
        for c in CONDITIONS:
            p, rk = predict(model, test[c], gated=gated)
            out[c] = float(iou_per_image(p > 0.5, yt).mean())
            if rk is not None:
                ranks[c] = float(rk.mean())
        return out, ranks

    res, rks = {"frozen": evaluate(base)[0]}, {}
    gen = torch.Generator().manual_seed(a.seed + 1)
    for arm in a.arms.split(","):
        m = copy.deepcopy(base)
        t0 = time.process_time()
        if arm == "lora":
            pm = peft_lora(m, a.r, float(a.r))
            train_loop(pm, [p for p in pm.parameters() if p.requires_grad], XA, YA, a.steps, a.batch, a.lr, gen, desc=arm)
            model, gated = pm.merge_and_unload(), None
        elif arm in ("gara", "const"):
            gated = add_gated(m, a.r, float(a.r), "gumbel" if arm == "gara" else "const")
            train_loop(m, [p for p in m.parameters() if p.requires_grad], XA, YA, a.steps, a.batch, a.lr, gen,
                       lam=a.lam, gated=gated, desc=arm, gate_lr_mult=a.gate_lr_mult)
            model = m
        elif arm == "full":
            train_loop(m, list(m.parameters()), XA, YA, a.steps, a.batch, a.full_lr, gen, desc=arm)
            model, gated = m, None
        dt = time.process_time() - t0
        res[arm], rk = evaluate(model, gated)
        if rk:
            rks[arm] = rk
        print(f"{arm}: {dt:.1f} CPU s ({a.steps / dt:.1f} steps/s)")
    print(f"{'arm':8s} clean  seen   unseen  | " + " ".join(c[:7] for c in CONDITIONS))
    for arm, d in res.items():
        seen, unseen = np.mean([d[c] for c in SEEN]), np.mean([d[c] for c in UNSEEN])
        print(f"{arm:8s} {d['clean']:.3f}  {seen:.3f}  {unseen:.3f}   | " + " ".join(f"{d[c]:.3f}  " for c in CONDITIONS))
    for arm, rk in rks.items():
        v = np.array(list(rk.values()))
        print(f"rank {arm}: " + " ".join(f"{c[:7]}={x:.2f}" for c, x in rk.items()) + f"  max/min={v.max() / max(v.min(), 1e-9):.3f}")
    f, g = res["frozen"], res.get("gara")
    if g:
        print(f"CHECK adapt: gara seen - frozen = {np.mean([g[c] for c in SEEN]) - np.mean([f[c] for c in SEEN]):+.3f}")
        print(f"CHECK clean kept: gara clean - frozen = {g['clean'] - f['clean']:+.3f}")
    for arm in res:
        if arm != "frozen":
            d = res[arm]
            print(f"  {arm}: seen gain {np.mean([d[c] for c in SEEN]) - np.mean([f[c] for c in SEEN]):+.3f}, "
                  f"unseen gain {np.mean([d[c] for c in UNSEEN]) - np.mean([f[c] for c in UNSEEN]):+.3f}, "
                  f"clean {d['clean'] - f['clean']:+.3f}, (seen+unseen)/2 {np.mean([d[c] for c in SEEN]) / 2 + np.mean([d[c] for c in UNSEEN]) / 2:.3f}")


if __name__ == "__main__":
    main()
