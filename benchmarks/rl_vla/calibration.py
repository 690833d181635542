"""rl_vla calibration: SFT, then PPO / GRPO / DPO from it, success on the five splits; CPU seconds.

    python benchmarks/rl_vla_calibration.py [seed] [n_demos] [env_steps] [sft_epochs] [two-budgets]

Environment: ``PPO_ONLY=1`` stops after PPO; ``PPO_LR``, ``PPO_EPOCHS``, ``PPO_ENT`` override PPO's
learning rate (3e-4), epochs (4) and entropy coefficient (0.01).
"""
from __future__ import annotations

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
    limit_threads()
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    n_demos = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    env_steps = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    sft_epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    torch.manual_seed(seed)
    env_kw = {"grid": 6, "cell": 6, "max_steps": 30}
    arch = {"cell": 6, "channels": 16, "features": 128}
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
    eval_seeds = {s: 10**9 + 1000 * i + np.arange(300) for i, s in enumerate(splits)}


    def evaluate(name, policy):
        t = time.process_time()
        row = {s: methods.rollout(policy, s, eval_seeds[s], env_kw, temperature=0.6, gen=torch.Generator().manual_seed(0))["success"].mean() for s in splits}
        print(f"{name:10s} " + " ".join(f"{s}={v:.3f}" for s, v in row.items()) + f"  ({time.process_time() - t:.1f} CPU s eval)", flush=True)
        return row


    res = {"sft": evaluate("sft", pol)}
    pkw = policy_kwargs(**arch)
    for steps in ([2048, env_steps] if len(sys.argv) > 5 else [env_steps]):
        pp = NS(n_envs=8, n_steps=128, batch=256, epochs=int(os.environ.get("PPO_EPOCHS", 4)),
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
    gp = NS(lr=3e-4, env_steps=env_steps, groups=16, group_size=8, epochs=2, batch=256, clip=0.2)
    g_pol = load_state(make_policy(env.observation_space, env.action_space, **arch), sft_state)
    t = time.process_time()
    curve = methods.grpo(g_pol, gp, env_kw, seed, gen)
    dt = time.process_time() - t
    print(f"grpo: {dt:.1f} CPU s; success by iteration {curve[0]:.2f} .. {np.mean(curve[-3:]):.2f}", flush=True)
    res["grpo"] = evaluate("grpo", g_pol)
    dp = NS(lr=1e-4, env_steps=env_steps, groups=32, group_size=4, epochs=2, batch=32, beta=0.1, rounds=2)
    d_pol = load_state(make_policy(env.observation_space, env.action_space, **arch), sft_state)
    ref = load_state(make_policy(env.observation_space, env.action_space, **arch), sft_state)
    t = time.process_time()
    curve = methods.dpo(d_pol, ref, dp, env_kw, seed, gen)
    dt = time.process_time() - t
    print(f"dpo: {dt:.1f} CPU s; success by collection {curve[0]:.2f} .. {np.mean(curve[-3:]):.2f}", flush=True)
    res["dpo"] = evaluate("dpo", d_pol)


if __name__ == "__main__":
    main()
