"""rl_vla calibration: SFT, then PPO / GRPO / DPO from it, success on the five splits; CPU seconds.

    python benchmarks/rl_vla/calibration.py [seed] [n_demos] [env_steps] [sft_epochs] [two-budgets]

Environment: ``PPO_ONLY=1`` stops after PPO; ``PPO_LR``, ``PPO_EPOCHS``, ``PPO_ENT`` override PPO's
learning rate (3e-4), epochs (4) and entropy coefficient (0.01).
``--smoke`` runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from types import SimpleNamespace as NS

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.rl_vla import methods
from stages.rl_vla.env import PickPlaceEnv, expert_demos
from stages.rl_vla.policy import load_state, make_policy, policy_kwargs, state_bytes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seed", nargs="?", type=int, default=0)
    ap.add_argument("n_demos", nargs="?", type=int, default=200)
    ap.add_argument("env_steps", nargs="?", type=int, default=20000)
    ap.add_argument("sft_epochs", nargs="?", type=int, default=20)
    ap.add_argument("two_budgets", nargs="?", help="any value: PPO at 2048 env steps as well")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    limit_threads()
    seed, n_demos, env_steps, sft_epochs = a.seed, a.n_demos, a.env_steps, a.sft_epochs
    n_eval, ppo_size, grpo_size, dpo_size = 300, dict(n_envs=8, n_steps=128, batch=256), (16, 8), (32, 4, 32, 2)
    arch = {"cell": 6, "channels": 16, "features": 128}
    if a.smoke:                    # the same code path at tiny sizes (figures meaningless)
        n_demos, env_steps, sft_epochs, n_eval = 30, 64, 8, 4
        ppo_size, grpo_size, dpo_size = dict(n_envs=2, n_steps=32, batch=32), (2, 4), (2, 4, 8, 1)
        arch = {"cell": 6, "channels": 8, "features": 32}
        print(f"smoke: tiny sizes ({n_demos} demos, {env_steps} env steps, {n_eval} eval episodes per split)", flush=True)
    torch.manual_seed(seed)
    env_kw = {"grid": 6, "cell": 6, "max_steps": 30}
    env = PickPlaceEnv(**env_kw)
    gen = torch.Generator().manual_seed(seed)
    t = time.process_time()
    data = expert_demos(n_demos, 10_000 * (seed + 1), env_kw)
    print(f"demos: {len(data['action'])} steps, {time.process_time() - t:.1f} CPU s", flush=True)
    pol = make_policy(env.observation_space, env.action_space, **arch)
    t = time.process_time()
    losses = methods.sft(pol, data, epochs=sft_epochs, batch=64, lr=2e-3, gen=gen)
    dt = time.process_time() - t
    print(f"sft: loss {losses[0]:.3f} -> {losses[-1]:.3f}; {dt:.1f} CPU s, {sft_epochs * len(data['action']) / dt:.0f} samples/s", flush=True)
    sft_state = state_bytes(pol)
    splits = ("train", "visual", "semantic", "execution", "unseen_word")
    eval_seeds = {s: 10**9 + 1000 * i + np.arange(n_eval) for i, s in enumerate(splits)}


    def evaluate(name, policy):
        t = time.process_time()
        row = {s: methods.rollout(policy, s, eval_seeds[s], env_kw, temperature=0.6, gen=torch.Generator().manual_seed(0))["success"].mean() for s in splits}
        print(f"{name:10s} " + " ".join(f"{s}={v:.3f}" for s, v in row.items()) + f"  ({time.process_time() - t:.1f} CPU s eval)", flush=True)
        return row


    res = {"sft": evaluate("sft", pol)}
    pkw = policy_kwargs(**arch)
    for steps in ([2048, env_steps] if a.two_budgets is not None else [env_steps]):
        pp = NS(**ppo_size, epochs=int(os.environ.get("PPO_EPOCHS", 4)),
                lr=float(os.environ.get("PPO_LR", 3e-4)), gamma=0.97, clip=0.2,
                ent_coef=float(os.environ.get("PPO_ENT", 0.01)), vf_coef=0.5, env_steps=steps)
        t = time.process_time()
        ppo_pol, curve = methods.ppo(sft_state, pp, env_kw, seed, pkw)
        dt = time.process_time() - t
        print(f"ppo {steps} steps: {dt:.1f} CPU s ({steps / dt:.0f} env steps/s); train success first/last 100: "
              f"{np.mean(curve[:100]):.2f} {np.mean(curve[-100:]):.2f}", flush=True)
        res[f"ppo{steps}"] = evaluate(f"ppo{steps}", ppo_pol)
    if os.environ.get("PPO_ONLY"):
        sys.exit(0)
    gp = NS(lr=3e-4, env_steps=env_steps, groups=grpo_size[0], group_size=grpo_size[1], epochs=2, batch=256, clip=0.2)
    g_pol = load_state(make_policy(env.observation_space, env.action_space, **arch), sft_state)
    t = time.process_time()
    curve = methods.grpo(g_pol, gp, env_kw, seed, gen)
    dt = time.process_time() - t
    print(f"grpo: {dt:.1f} CPU s; success by iteration {curve[0]:.2f} .. {np.mean(curve[-3:]):.2f}", flush=True)
    res["grpo"] = evaluate("grpo", g_pol)
    dp = NS(lr=1e-4, env_steps=env_steps, groups=dpo_size[0], group_size=dpo_size[1], epochs=2,
            batch=dpo_size[2], beta=0.1, rounds=dpo_size[3])
    d_pol = load_state(make_policy(env.observation_space, env.action_space, **arch), sft_state)
    ref = load_state(make_policy(env.observation_space, env.action_space, **arch), sft_state)
    t = time.process_time()
    curve = methods.dpo(d_pol, ref, dp, env_kw, seed, gen)
    dt = time.process_time() - t
    print(f"dpo: {dt:.1f} CPU s; success by collection {curve[0]:.2f} .. {np.mean(curve[-3:]):.2f}", flush=True)
    res["dpo"] = evaluate("dpo", d_pol)


if __name__ == "__main__":
    main()
