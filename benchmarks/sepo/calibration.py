"""sepo calibration: pre-training speed, SEPO steps/s, the exact distribution, and the two must checks
(SEPO's exact gain, the shuffled-reward control) plus the baselines' curves, at a chosen size.
Usage: python -m benchmarks.sepo_calibration SEED [L] [STEPS] [LR] [GROUPS]"""
from __future__ import annotations

import sys
import time

import numpy as np
import torch

from stages.sepo.dd import all_sequences, exact_distribution, kl, markov_data, markov_probs, motif_reward, sample
from stages.sepo.policy import best_of_n, matched_gap, tilt
from stages.sepo.runs import pretrain, rwft, sepo


def main() -> None:
    torch.set_num_threads(1)
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    L = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    lr = float(sys.argv[4]) if len(sys.argv) > 4 else 3e-4
    G = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    INC = (sys.argv[6] == '1') if len(sys.argv) > 6 else True
    OBJ = sys.argv[7] if len(sys.argv) > 7 else 'surrogate'
    rng = np.random.default_rng(seed)
    x, start, trans = markov_data(20000, L, 0.7, rng)
    reward = lambda s: motif_reward(s, "TATA", 0.25)  # noqa: E731
    seqs = all_sequences(L)
    r_all = reward(seqs)
    t = time.process_time()
    pre, losses = pretrain(x, 128, 2, 2000, 256, 3e-3, seed)
    print(f"pretrain 2000 steps {time.process_time()-t:.1f} s cpu; loss {losses[0]:.2f}->{np.mean(losses[-100:]):.2f}")
    t = time.process_time()
    p_pre = exact_distribution(pre)
    print(f"exact dist {time.process_time()-t:.2f} s cpu, sum {p_pre.sum():.6f}; KL(data||pre) {kl(markov_probs(L, start, trans), p_pre):.4f}")
    r0 = float(p_pre @ r_all)
    s = sample(pre, 20000, torch.Generator().manual_seed(1))
    print(f"pre reward exact {r0:.3f} sampled {reward(s.numpy()).mean():.3f}; data reward {markov_probs(L, start, trans) @ r_all:.3f}")
    for shuffle in (False, True):
        t = time.process_time()
        m, curve = sepo(pre, reward, p_pre, r_all, steps=steps, groups=G, group_size=16, inner=5, lr=lr, clip=0.2,
                        per_group=False, include_self=INC, objective=OBJ, eval_every=max(steps // 5, 1), seed=seed + 10, shuffle=shuffle)
        print(f"SEPO shuffle={shuffle}: {time.process_time()-t:.1f} s cpu ({steps} steps);",
              " ".join(f"{c['step']}:{c['kl']:.2f}/{c['reward']:.2f}" for c in curve))
        if not shuffle:
            sc = curve
    t = time.process_time()
    smp = sample(pre, 4096, torch.Generator().manual_seed(seed + 20)).numpy()
    rs = reward(smp)
    rw = [(0.0, r0)]
    for tau in (2.0, 1.0, 0.5, 0.25, 0.1):
        q = exact_distribution(rwft(pre, smp, rs, tau, steps=300, batch=256, lr=1e-3, seed=seed + 30))
        rw.append((kl(q, p_pre), float(q @ r_all)))
    print(f"RWFT {time.process_time()-t:.1f} s cpu:", " ".join(f"{k:.2f}/{v:.2f}" for k, v in rw))
    bo = [(kl(q, p_pre), float(q @ r_all)) for q in (best_of_n(p_pre, r_all, n) for n in (1, 2, 4, 8, 16, 32, 64, 128))]
    ti = [(kl(q, p_pre), float(q @ r_all)) for q in (tilt(p_pre, r_all, b) for b in (4, 2, 1, 0.5, 0.25, 0.1))]
    print("BoN", " ".join(f"{k:.2f}/{v:.2f}" for k, v in bo))
    print("tilt", " ".join(f"{k:.2f}/{v:.2f}" for k, v in ti))
    for name, c in (("RWFT", rw), ("BoN", bo)):
        g = matched_gap([c_["kl"] for c_ in sc[1:]], [c_["reward"] for c_ in sc[1:]], [a for a, _ in c], [b for _, b in c])
        print(name, "matched (KL, SEPO, base):", " ".join(f"({a:.2f},{b:.2f},{c2:.2f})" for a, b, c2 in g))


if __name__ == "__main__":
    main()
