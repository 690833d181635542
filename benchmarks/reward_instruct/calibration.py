"""Calibration of reward_instruct (not part of the pipeline): one seed of the recipe, timed by CPU.

Teacher DDPM, reward model and judge on sklearn's digits; then R0 (gentle and aggressive
schedules, several lambdas), distillation + reward, and the unregularised control, each judged at
its checkpoints. Usage: python -m benchmarks.reward_instruct.calibration SEED [TEACHER_STEPS]
--smoke (SEED optional, 0 by default) runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import copy
import sys
import time

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.reward_instruct import diffusion as D
from stages.reward_instruct.measure import judge_metrics


def main(seed: int, teacher_steps: int = 4000, smoke: bool = False) -> None:
    limit_threads(1)
    # classifier steps (reward, judge), samples per class judged, pool size, generator steps (gentle, aggressive)
    clf_steps, per_class, npool, gentle, aggressive = (1500, 2000), 50, 4096, 300, 600
    if smoke:
        teacher_steps, clf_steps, per_class, npool, gentle, aggressive = 3, (3, 3), 3, 16, 6, 6
        print("smoke: 3 teacher steps, 3 classifier steps, 6 generator steps per run, 30 judged samples "
              "(figures meaningless)")
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.data / 8.0 - 1.0, dtype=torch.float32)
    y = torch.tensor(d.target, dtype=torch.long)
    rng = np.random.default_rng(seed)
    perm = torch.tensor(rng.permutation(len(x)))
    tr, te = perm[:1200], perm[1200:]
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    t0 = time.process_time()
    reward = D.make_classifier(128, 64)
    D.train_classifier(reward, x[tr], y[tr], clf_steps[0], 128, 1e-3, 0.0, g)
    judge = D.make_classifier(256, 64)
    D.train_classifier(judge, x[te], y[te], clf_steps[1], 128, 1e-3, 0.3, g)
    t1 = time.process_time()
    with torch.no_grad():
        acc_r = float((reward(x[te]).argmax(1) == y[te]).float().mean())
        acc_j = float((judge(x[tr]).argmax(1) == y[tr]).float().mean())
        real_feats = judge[:-1](x).double().numpy()
    print(f"classifiers {t1 - t0:.1f} s CPU; reward acc on judge split {acc_r:.3f}, judge acc on reward split {acc_j:.3f}")
    abar = D.schedule(100, 0.2)
    teacher = D.make_epsnet(256, 3)
    t0 = time.process_time()
    D.train_ddpm(teacher, x, y, abar, teacher_steps, 256, 1e-3, g)
    tt = time.process_time() - t0
    print(f"teacher {teacher_steps} steps: {tt:.1f} s CPU, {teacher_steps / tt:.0f} steps/s")
    ge = torch.Generator().manual_seed(10_000 + seed)
    ce = torch.arange(10).repeat_interleave(per_class)
    ze = torch.randn(len(ce), 64, generator=ge)

    def judge_net(net, steps):
        with torch.no_grad():
            xs = D.sample(net, abar, ce, steps, None, eta=0.0, z=ze.clone())
        return judge_metrics(judge, xs.numpy(), ce.numpy(), real_feats)

    t50, t4 = judge_net(teacher, 50), judge_net(teacher, 4)
    print(f"teacher-50 {fmt(t50)}\nteacher-4  {fmt(t4)}")
    # distillation pool
    t0 = time.process_time()
    pc = torch.randint(0, 10, (npool,), generator=g)
    pz = torch.randn(npool, 64, generator=g)
    with torch.no_grad():
        pt = D.sample(teacher, abar, pc, 25, None, eta=0.0, z=pz.clone())
    print(f"pool of {npool} 25-step targets: {time.process_time() - t0:.1f} s CPU")
    pool = {"c": pc, "z": pz, "target": pt}
    runs = [("r0 gentle lam0.1", "r0", gentle, 3e-4, 0.1, True), ("distill gentle", "distill", gentle, 3e-4, 0, False),
            ("r0 gentle lam100", "r0", gentle, 3e-4, 100.0, True),
            ("unreg aggressive", "r0", aggressive, 1e-3, 0.0, False),
            ("r0 aggressive lam10", "r0", aggressive, 1e-3, 10.0, True)]
    for name, method, steps, lr, lam, reta in runs:
        net = copy.deepcopy(teacher)
        cks = list(range(0, steps + 1, steps // 6))
        out = {}
        gg = torch.Generator().manual_seed(seed * 7 + 1)
        t0 = time.process_time()
        hist = D.train_generator(net, abar, reward, method=method, steps=steps, batch=256, lr=lr, lam=lam,
                                 random_eta=reta, gen_steps=4, gen=gg, checkpoints=cks,
                                 on_checkpoint=lambda s: out.__setitem__(s, judge_net(net, 4)), pool=pool)
        el = time.process_time() - t0
        print(f"{name}: {el:.1f} s CPU incl. {len(cks)} evals ({steps / el:.1f} steps/s); dtheta2 {hist[-1]['dtheta2']:.3g}")
        for s in cks:
            print(f"   {s:4d} {fmt(out[s])}  FD/t50 {out[s]['fd'] / t50['fd']:.2f}")
        sys.stdout.flush()


def fmt(m):
    return f"acc {m['accuracy']:.3f} logp {m['logp']:.3f} FD {m['fd']:.1f} div {m['diversity']:.2f}"


if __name__ == "__main__":
    if "--smoke" in sys.argv[1:]:
        main(([int(a) for a in sys.argv[1:] if a != "--smoke"] or [0])[0], smoke=True)   # SEED, if given
    else:
        main(int(sys.argv[1]), *(int(a) for a in sys.argv[2:]))
