"""Calibration of llm_co_foarl: steps/s of SFT and FOARL, and the must checks at a given size,
with the settings where they fail (FOARL with lr 0 = SFT itself; an equal-compute SFT control).

    nice -n 19 python -m benchmarks.llm_co_foarl.calibration --sft-steps 600 --rl-steps 40

``--smoke`` runs it at tiny sizes in seconds (what CI runs): size-5 problems, a few train and test
instances, a d=16 model, 2 SFT steps and 1 FOARL step.
"""
from __future__ import annotations

import argparse
import copy
import json
import time
from types import SimpleNamespace

import numpy as np

SMOKE = {"n_train": 6, "n_test": 3, "size": 5, "sft_steps": 2, "batch": 4, "rl_steps": 1, "prompts": 2, "group": 2,
         "d": 16}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-train", type=int, default=300)
    ap.add_argument("--n-test", type=int, default=200)
    ap.add_argument("--size", type=int, default=10)
    ap.add_argument("--sft-steps", type=int, default=600)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--rl-steps", type=int, default=40)
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--rl-lr", type=float, default=1e-4)
    ap.add_argument("--beta", type=float, default=0.05)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--problems", default="tsp,kp")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        for k, v in SMOKE.items():
            setattr(a, k, v)
        print("smoke: tiny sizes, the figures mean nothing", flush=True)

    import torch

    from stages.llm_co_foarl import core

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    probs = a.problems.split(",")
    t = time.time()
    train = {p: core.with_optima(p, core.make_instances(p, a.size, a.n_train, rng), 2) for p in probs}
    test = {p: core.with_optima(p, core.make_instances(p, a.size, a.n_test, rng), 2) for p in probs}
    print(f"optima: {time.time() - t:.1f} s wall", flush=True)
    cfg = SimpleNamespace(d_model=a.d, heads=4, enc_layers=3, dec_layers=2)
    model = core.make_model(cfg)
    print("params", sum(p.numel() for p in model.parameters()))
    curve = []
    cpu = core.train_sft(model, train, a.sft_steps, a.batch, a.lr, rng, curve=curve)
    print(f"SFT {a.sft_steps} steps: {cpu:.1f} s CPU, {a.sft_steps / cpu:.2f} steps/s; loss {np.mean(curve[-20:]):.3f}")
    size = {p: a.size for p in probs}
    res = {}
    t = time.process_time()
    res["sft"] = {p: core.evaluate(model, test[p], p, a.size, 8, a.seed) for p in probs}
    print(f"eval {time.process_time() - t:.1f} s CPU")
    rl = copy.deepcopy(model)
    rcurve = []
    cpu = core.train_foarl(rl, train, size, a.rl_steps, a.prompts, a.group, a.rl_lr, a.beta, rng, a.seed, rcurve)
    print(f"FOARL {a.rl_steps} steps: {cpu:.1f} s CPU, {a.rl_steps / cpu:.2f} steps/s")
    res["rl"] = {p: core.evaluate(rl, test[p], p, a.size, 8, a.seed) for p in probs}
    ctrl = copy.deepcopy(model)
    cpu = core.train_sft(ctrl, train, a.rl_steps * len(probs), a.prompts * a.group, a.lr * 0.3, rng)
    print(f"SFT control {a.rl_steps * len(probs)} steps of {a.prompts * a.group}: {cpu:.1f} s CPU")
    res["sft_more"] = {p: core.evaluate(ctrl, test[p], p, a.size, 8, a.seed) for p in probs}
    for m, r in res.items():
        for p in probs:
            for dec in ("greedy", "sample", "best_of"):
                x = r[p][dec]
                print(f"{m:9s} {p:4s} {dec:8s} feas {x['feasible_rate']:.3f} gap_f {x['gap_feasible']:.4f} gap_all {x['gap_all']:.4f}")
    print(json.dumps([c for c in rcurve[::max(1, len(rcurve) // 10)]]))


if __name__ == "__main__":
    main()
