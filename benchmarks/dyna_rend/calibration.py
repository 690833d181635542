"""dyna_rend calibration: steps/s, and every arm's pretext and downstream figures at a size.

usage: python -m benchmarks.dyna_rend.calibration --steps 1500 --ft 400 --seed 0 --ckpt 100 [--arms ...]
(--ckpt: dynarend is also fine-tuned from its checkpoint at that step, the transfer control)
``--smoke`` runs it at tiny sizes in seconds (what CI runs): every arm, 3 + 3 steps on a few scenes, --ckpt 2.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.dyna_rend.loops import finetune, new_model, pretrain, views_of
from stages.dyna_rend.nets import future_mse, success
from stages.dyna_rend.world import Grid, make_set


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--ft", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--c", type=int, default=16)
    ap.add_argument("--demos", type=int, default=60)
    ap.add_argument("--npre", type=int, default=2000)
    ap.add_argument("--ntest", type=int, default=300)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--ftlr", type=float, default=1e-3)
    ap.add_argument("--arms", default="none,mae2d,vidpred2d,recon3d,dynarend")
    ap.add_argument("--ckpt", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # tiny sizes; options given explicitly still win
        ap.set_defaults(steps=3, ft=3, c=4, demos=4, npre=16, ntest=8, batch=4, ckpt=2)
        a = ap.parse_args()
    limit_threads(1)
    g = Grid(8, 8, 4)
    IN, ALL = ("x+", "y+"), ("top", "x+", "x-", "y+", "y-")
    HELD = ("top", "x-", "y-")
    ss = np.random.SeedSequence(a.seed).spawn(6)
    pre = views_of(make_set(ss[0], a.npre, g, 4, 0.3), ALL)
    demos = views_of(make_set(ss[1], a.demos, g, 4, 0.3), ALL)
    tests = {p: views_of(make_set(ss[2 + i], a.ntest, g, 4, 0.3, p), ALL)
             for i, p in enumerate(("none", "distractors", "table", "lighting"))}
    for arm in a.arms.split(","):
        m = new_model(g, a.c, IN, a.seed)
        t0 = time.process_time()
        curve, saved = pretrain(m, arm, pre, IN, ALL, a.steps, a.batch, a.lr, 0.5, 2, a.seed,
                                checkpoints=(a.ckpt,) if a.ckpt and arm == "dynarend" else ())
        tp = time.process_time() - t0
        extra = ""
        if arm in ("recon3d", "dynarend"):
            t = tests["none"]
            fm = future_mse(m, t, IN, HELD, True)
            cm = future_mse(m, t, IN, HELD, False)
            copy = float(sum(((t["views"][c] - t["views_f"][c]) ** 2).mean() for c in HELD) / len(HELD))
            sh = dict(t)
            sh["instr"] = t["instr"][torch.randperm(len(t["target"]), generator=torch.Generator().manual_seed(1))]
            fs = future_mse(m, sh, IN, HELD, True)
            extra = f" fut {fm:.4f} cur-as-fut {cm:.4f} copy {copy:.4f} ratio {fm/cm:.3f} shuffled {fs/cm:.3f}"
        states = {"": m.state_dict()}
        if a.ckpt and saved:
            states[f"@{a.ckpt}"] = saved[a.ckpt]
        for tag, st in states.items():
            mm = new_model(g, a.c, IN, a.seed)
            mm.load_state_dict(st)
            t1 = time.process_time()
            finetune(mm, demos, IN, a.ft, 32, a.ftlr, a.seed + 100)
            tf = time.process_time() - t1
            s = {p: success(mm, t, IN) for p, t in tests.items()}
            print(f"{arm}{tag}: pre {tp:.1f}s ({a.steps/max(tp,1e-9):.1f} st/s) ft {tf:.1f}s loss {np.mean(curve[-50:]) if curve else 0:.4f} "
                  + " ".join(f"{p} {v:.3f}" for p, v in s.items()) + extra, flush=True)


if __name__ == "__main__":
    main()
