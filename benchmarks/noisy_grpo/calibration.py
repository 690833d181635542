"""noisy_grpo calibration: SFT once, then each RL method from the same SFT policy; prints ID and
OOD accuracy and the paired gains of NoisyGRPO over GRPO. Usage:
python benchmarks/noisy_grpo/calibration.py [steps] [seed] [sigma_start]
--smoke runs it at tiny sizes in seconds (what CI runs)."""
import argparse
import copy
import sys
import os
import time

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.noisy_grpo import core


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("steps", nargs="?", type=int, default=150)
    ap.add_argument("seed", nargs="?", type=int, default=0)
    ap.add_argument("sigma_start", nargs="?", type=float, default=0.6)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args(sys.argv[1:])
    limit_threads(1)
    steps, seed, s0 = a.steps, a.seed, a.sigma_start
    # images (train, test, OOD), SFT steps and batch, RL prompts x group
    n_img, n_test, sft_steps, sft_batch, prompts, group = 2000, 1000, 300, 64, 16, 8
    if a.smoke:
        steps, n_img, n_test, sft_steps, sft_batch, prompts, group = 2, 64, 32, 3, 16, 4, 4
        print("smoke: 64 images, 3 SFT steps, 2 RL steps per method (figures meaningless)")
    G, M = 6, 3
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    img, cnt, q = core.make_images(n_img, G, M, rng)
    ch = core.noisy_chains(cnt, q, 0.4, M, rng)
    te = core.make_images(n_test, G, M, rng)
    DR = tuple(float(x) for x in os.environ.get('DIM', '0.5,0.8').split(','))
    CL = float(os.environ.get('CLUT', '0.25'))
    oo = core.make_images(n_test, G, M, rng, ood=True, dim_range=DR, pixel_noise=CL)
    T = lambda a: torch.as_tensor(a)
    gen = torch.Generator().manual_seed(seed)
    pol = core.Policy(G, M + 1)
    t0 = time.process_time()
    ls = core.sft(pol, T(img), T(q), T(ch), sft_steps, sft_batch, 3e-3, gen)
    print(f"sft {sft_steps} steps {time.process_time()-t0:.1f}s cpu, loss {ls[-1]:.3f}")
    ref = copy.deepcopy(pol).requires_grad_(False)
    def ev(p):
        return core.correct(p, T(te[0]), T(te[2]), T(te[1]), gen), core.correct(p, T(oo[0]), T(oo[2]), T(oo[1]), gen)
    i0, o0 = ev(pol)
    print(f"sft: id {i0.mean():.3f} ood {o0.mean():.3f}")
    res = {}
    for m in core.METHODS:
        p = copy.deepcopy(pol)
        g = torch.Generator().manual_seed(seed + 1)
        t0 = time.process_time()
        cur = core.rl(p, ref, T(img), T(q), T(cnt), m, steps, prompts, group, 1e-3, 0.2, 0.02, 2, s0, float(os.environ.get('SEND', s0 / 3)), float(os.environ.get('PV', 1.0)), 0.25, g, os.environ.get('NOISY', '1') == '1')
        dt = time.process_time() - t0
        res[m] = ev(p)
        print(f"{m:11s} {steps/dt:.1f} steps/s cpu  train-rew {np.mean(cur[-20:]):.3f}  id {res[m][0].mean():.3f} ood {res[m][1].mean():.3f}", flush=True)
    for m in ("noisy_grpo", "noise_only", "bayes_only"):
        print(f"gain {m} - grpo: id {np.mean(res[m][0]-res['grpo'][0]):+.3f} ood {np.mean(res[m][1]-res['grpo'][1]):+.3f}")


if __name__ == "__main__":
    main()
