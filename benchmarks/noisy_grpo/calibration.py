"""noisy_grpo calibration: SFT once, then each RL method from the same SFT policy; prints ID and
OOD accuracy and the paired gains of NoisyGRPO over GRPO. Usage:
python benchmarks/noisy_grpo_calibration.py [steps] [seed] [sigma_start]"""
import copy
import sys
import os
import time

import numpy as np
import torch

from stages.noisy_grpo import core


def main() -> None:
    torch.set_num_threads(1)
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    s0 = float(sys.argv[3]) if len(sys.argv) > 3 else 0.6
    G, M = 6, 3
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    img, cnt, q = core.make_images(2000, G, M, rng)
    ch = core.noisy_chains(cnt, q, 0.4, M, rng)
    te = core.make_images(1000, G, M, rng)
    DR = tuple(float(x) for x in os.environ.get('DIM', '0.5,0.8').split(','))
    CL = float(os.environ.get('CLUT', '0.25'))
    oo = core.make_images(1000, G, M, rng, ood=True, dim_range=DR, pixel_noise=CL)
    T = lambda a: torch.as_tensor(a)
    gen = torch.Generator().manual_seed(seed)
    pol = core.Policy(G, M + 1)
    t0 = time.process_time()
    ls = core.sft(pol, T(img), T(q), T(ch), 300, 64, 3e-3, gen)
    print(f"sft 300 steps {time.process_time()-t0:.1f}s cpu, loss {ls[-1]:.3f}")
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
        cur = core.rl(p, ref, T(img), T(q), T(cnt), m, steps, 16, 8, 1e-3, 0.2, 0.02, 2, s0, float(os.environ.get('SEND', s0 / 3)), float(os.environ.get('PV', 1.0)), 0.25, g, os.environ.get('NOISY', '1') == '1')
        dt = time.process_time() - t0
        res[m] = ev(p)
        print(f"{m:11s} {steps/dt:.1f} steps/s cpu  train-rew {np.mean(cur[-20:]):.3f}  id {res[m][0].mean():.3f} ood {res[m][1].mean():.3f}", flush=True)
    for m in ("noisy_grpo", "noise_only", "bayes_only"):
        print(f"gain {m} - grpo: id {np.mean(res[m][0]-res['grpo'][0]):+.3f} ood {np.mean(res[m][1]-res['grpo'][1]):+.3f}")


if __name__ == "__main__":
    main()
