"""sepo calibration: pre-training speed, SEPO steps/s, the exact distribution, and the two must checks
(SEPO's exact gain, the shuffled-reward control) plus the baselines' curves, at a chosen size.
Usage: python -m benchmarks.sepo.calibration SEED [L] [STEPS] [LR] [GROUPS] [INCLUDE_SELF] [OBJECTIVE]
``--smoke`` runs it at tiny sizes in seconds (what CI runs)."""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.sepo.dd import all_sequences, exact_distribution, kl, markov_data, markov_probs, motif_reward, sample
from stages.sepo.policy import best_of_n, matched_gap, tilt
from stages.sepo.runs import pretrain, rwft, sepo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seed", nargs="?", type=int, default=0)
    ap.add_argument("L", nargs="?", type=int, default=8, help="sequence length")
    ap.add_argument("steps", nargs="?", type=int, default=40, help="SEPO steps")
    ap.add_argument("lr", nargs="?", type=float, default=3e-4)
    ap.add_argument("groups", nargs="?", type=int, default=4)
    ap.add_argument("include_self", nargs="?", default=None, help="'1' (default) or anything else for False")
    ap.add_argument("objective", nargs="?", default="surrogate")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    limit_threads(1)
    seed, L, steps, lr, G, OBJ = a.seed, a.L, a.steps, a.lr, a.groups, a.objective
    INC = (a.include_self == '1') if a.include_self is not None else True
    # data, pre-training (hidden, steps, batch), samples, SEPO group size and inner steps, RWFT temperatures and steps
    n_data, pre_hidden, pre_steps, pre_batch, n_sample = 20000, 128, 2000, 256, 20000
    group_size, inner, taus, rw_samples, rw_steps, rw_batch = 16, 5, (2.0, 1.0, 0.5, 0.25, 0.1), 4096, 300, 256
    if a.smoke:                    # the same code path at tiny sizes (figures meaningless)
        L, steps, G = 4, 2, 2
        n_data, pre_hidden, pre_steps, pre_batch, n_sample = 500, 16, 20, 32, 200
        group_size, inner, taus, rw_samples, rw_steps, rw_batch = 4, 1, (1.0, 0.25), 64, 5, 16
        print(f"smoke: L={L}, {pre_steps} pre-training steps, {steps} SEPO steps, 2 RWFT temperatures", flush=True)
    rng = np.random.default_rng(seed)
    x, start, trans = markov_data(n_data, L, 0.7, rng)
    reward = lambda s: motif_reward(s, "TATA", 0.25)  # noqa: E731
    seqs = all_sequences(L)
    r_all = reward(seqs)
    t = time.process_time()
    pre, losses = pretrain(x, pre_hidden, 2, pre_steps, pre_batch, 3e-3, seed)
    print(f"pretrain {pre_steps} steps {time.process_time()-t:.1f} s cpu; loss {losses[0]:.2f}->{np.mean(losses[-100:]):.2f}")
    t = time.process_time()
    p_pre = exact_distribution(pre)
    print(f"exact dist {time.process_time()-t:.2f} s cpu, sum {p_pre.sum():.6f}; KL(data||pre) {kl(markov_probs(L, start, trans), p_pre):.4f}")
    r0 = float(p_pre @ r_all)
    s = sample(pre, n_sample, torch.Generator().manual_seed(1))
    print(f"pre reward exact {r0:.3f} sampled {reward(s.numpy()).mean():.3f}; data reward {markov_probs(L, start, trans) @ r_all:.3f}")
    for shuffle in (False, True):
        t = time.process_time()
        m, curve = sepo(pre, reward, p_pre, r_all, steps=steps, groups=G, group_size=group_size, inner=inner, lr=lr, clip=0.2,
                        per_group=False, include_self=INC, objective=OBJ, eval_every=max(steps // 5, 1), seed=seed + 10, shuffle=shuffle)
        print(f"SEPO shuffle={shuffle}: {time.process_time()-t:.1f} s cpu ({steps} steps);",
              " ".join(f"{c['step']}:{c['kl']:.2f}/{c['reward']:.2f}" for c in curve))
        if not shuffle:
            sc = curve
    t = time.process_time()
    smp = sample(pre, rw_samples, torch.Generator().manual_seed(seed + 20)).numpy()
    rs = reward(smp)
    rw = [(0.0, r0)]
    for tau in taus:
        q = exact_distribution(rwft(pre, smp, rs, tau, steps=rw_steps, batch=rw_batch, lr=1e-3, seed=seed + 30))
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
