"""webdancer calibration: SFT cold start, SFT+RL, RL from scratch, random, RL with a coin-flip
reward (the control); held-out Pass@1 by depth and CPU seconds. Usage:
python benchmarks/webdancer/calibration.py [n_sft] [rl_iters] [seed] [sft_epochs]
(environment: ``T`` topics, ``D`` model width, ``L`` layers, ``LR`` SFT learning rate).
``--smoke`` runs it at tiny sizes in seconds (what CI runs)."""
import argparse
import os
import time

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.webdancer import agent
from stages.webdancer.web import Layout, make_questions, make_sites, sample_trajectories


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n_sft", nargs="?", type=int, default=200)
    ap.add_argument("rl_iters", nargs="?", type=int, default=60)
    ap.add_argument("seed", nargs="?", type=int, default=0)
    ap.add_argument("sft_epochs", nargs="?", type=int, default=10)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    limit_threads(1)
    n_sft, iters, seed, ep = a.n_sft, a.rl_iters, a.seed, a.sft_epochs
    # sites (train, test), RL questions, test questions per depth, RL questions and group per iteration
    n_tr_sites, n_te_sites, n_rlq, n_te, rl_q, rl_g = 300, 200, 1000, 200, 32, 8
    if a.smoke:                    # the same code path at tiny sizes (figures meaningless)
        n_sft, iters, ep = 10, 2, 1
        n_tr_sites, n_te_sites, n_rlq, n_te, rl_q, rl_g = 10, 10, 20, 3, 4, 2
        print(f"smoke: {n_sft} SFT questions, {iters} RL iterations, {3 * n_te} test questions", flush=True)
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    lay = Layout(3, 3, int(os.environ.get("T",12)), 8)
    MS = 10
    tr_sites = make_sites(lay, n_tr_sites, rng)
    te_sites = make_sites(lay, n_te_sites, rng)
    def qs(sites, n, depths):
        s = rng.integers(0, len(sites["label"]), size=n)
        return make_questions(lay, sites, s, depths, rng)
    sftq = qs(tr_sites, n_sft, rng.integers(1, 4, size=n_sft))
    rlq = qs(tr_sites, n_rlq, rng.integers(1, 4, size=n_rlq))
    teq = qs(te_sites, 3 * n_te, np.repeat([1, 2, 3], n_te))
    t0 = time.process_time()
    obs, act, info = sample_trajectories(lay, tr_sites, sftq, 0.15, 0.1, MS, rng)
    print("traj", info, f"{time.process_time()-t0:.2f}s")
    def ev(pol, name):
        ro = agent.rollout(pol, lay, te_sites, teq, np.arange(3 * n_te), MS, None)
        byd = [ro["reward"][teq["depth"] == d].mean() for d in (1, 2, 3)]
        print(f"{name:12s} pass@1 {ro['reward'].mean():.3f} by depth {np.round(byd, 3)} steps {ro['steps'].mean():.2f}", flush=True)
        return ro["reward"].mean()
    t0 = time.process_time()
    D=int(os.environ.get("D",32)); L=int(os.environ.get("L",1)); LR=float(os.environ.get("LR",3e-3))
    pol = agent.make_policy(lay, D, L, 4)
    losses = agent.sft(pol, obs, act, ep, 64, LR, gen)
    print("sft loss", np.round(losses[::max(1, ep//5)], 3), f"{time.process_time()-t0:.2f}s")
    state = {k: v.clone() for k, v in pol.state_dict().items()}
    ev(pol, "sft")
    for name, init, noise in (("sft+rl", True, False), ("rl_scratch", False, False), ("sft+rl_coin", True, True)):
        p = agent.make_policy(lay, D, L, 4)
        if init:
            p.load_state_dict(state)
        t0 = time.process_time()
        curve = agent.rl(p, lay, tr_sites, rlq, MS, iters, rl_q, rl_g, 1e-3, 0.2, 0.28, 1, gen, rng, reward_noise=noise)
        print(name, "train curve", np.round(curve[::max(1, iters//6)], 2), f"{time.process_time()-t0:.2f}s")
        ev(p, name)
    r = agent.random_agent(lay, te_sites, teq, np.arange(3 * n_te), MS, rng)
    print("random pass@1", r["reward"].mean())


if __name__ == "__main__":
    main()
