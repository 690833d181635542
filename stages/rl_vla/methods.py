"""Rollouts, demonstrations and the four fine-tuning methods on one policy module.

* :func:`rollout`: a batch of episodes played by a policy, greedy or sampled, recorded if asked.
* :func:`sft`: behaviour cloning (cross-entropy on the expert's actions), from a fresh policy.
* :func:`ppo`: stable-baselines3's PPO from the SFT weights (the baseline library, run for real).
* :func:`grpo`: group-relative policy optimisation (our own, on the shared core :mod:`stages.common.pg`): groups of episodes from one
  reset seed, success as the reward, the clipped surrogate with no critic.
* :func:`dpo`: direct preference optimisation (our own, on the shared core :mod:`stages.common.pg`): pairs (a successful and a failed
  episode from one reset seed) from the current policy's rollouts, the SFT policy as the reference.

PPO, GRPO and DPO see the same number of environment steps (``env_steps``), all on the training split.
"""
from __future__ import annotations

import numpy as np
import torch

from stages.common.pg import clipped_surrogate, dpo_loss, group_advantages, sequence_logp

from .env import PickPlaceEnv
from .policy import logits, to_tensor


def rollout(policy, split: str, seeds, env_kw: dict, temperature: float, gen: torch.Generator | None = None,
            record: bool = False, action_noise: float = 0.0) -> dict:
    """Play one episode per reset seed (in a batch), actions sampled from softmax(logits /
    ``temperature``), or the argmax when ``temperature`` is 0. Returns ``success`` (per episode),
    ``length`` and, if ``record``, the steps' observations, actions, log-probabilities (at
    temperature 1, the policy's own) and episode indices."""
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    envs = [PickPlaceEnv(split=split, action_noise=action_noise, **env_kw) for _ in seeds]
    obs = [e.reset(seed=int(s))[0] for e, s in zip(envs, seeds)]
    active = list(range(len(envs)))
    success = np.zeros(len(envs), bool)
    length = np.zeros(len(envs), np.int64)
    rec = {"image": [], "instruction": [], "action": [], "logp": [], "episode": []}
    with torch.no_grad():
        while active:
            batch = {k: np.stack([obs[i][k] for i in active]) for k in ("image", "instruction")}
            lg = logits(policy, to_tensor(policy, batch))
            if temperature == 0:
                acts = lg.argmax(1)
            else:
                acts = torch.multinomial(torch.softmax(lg / temperature, 1), 1, generator=gen)[:, 0]
            if record:
                rec["image"].append(batch["image"])
                rec["instruction"].append(batch["instruction"])
                rec["action"].append(acts.numpy())
                rec["logp"].append(torch.log_softmax(lg, 1).gather(1, acts[:, None])[:, 0].numpy())
                rec["episode"].append(np.array(active))
            still = []
            for j, i in enumerate(active):
                obs[i], r, term, trunc, _ = envs[i].step(int(acts[j]))
                length[i] += 1
                if term or trunc:
                    success[i] = r > 0
                else:
                    still.append(i)
            active = still
    out = {"success": success, "length": length}
    if record:
        out.update({k: np.concatenate(v) for k, v in rec.items()})
    return out


class Progress:
    """Prints ``label: <what>`` at most every ``every_s`` seconds (long fine-tuning loops)."""

    def __init__(self, label: str, every_s: float = 8.0):
        import time

        self.label, self.every_s, self.clock = label, every_s, time.perf_counter
        self.last = self.clock()

    def __call__(self, what: str) -> None:
        if self.clock() - self.last >= self.every_s:
            self.last = self.clock()
            print(f"    {self.label}: {what}", flush=True)


def _batches(n: int, size: int, gen: torch.Generator):
    perm = torch.randperm(n, generator=gen)
    for i in range(0, n, size):
        yield perm[i:i + size]


def sft(policy, data: dict, epochs: int, batch: int, lr: float, gen: torch.Generator) -> list[float]:
    """Behaviour cloning on the demos; returns the loss of each epoch."""
    from stages.common.optim import Adam

    opt = Adam(policy.parameters(), lr=lr)
    image, instr = torch.as_tensor(data["image"]), torch.as_tensor(data["instruction"])
    action = torch.as_tensor(data["action"])
    losses = []
    for _ in range(epochs):
        tot = 0.0
        for idx in _batches(len(action), batch, gen):
            obs = to_tensor(policy, {"image": image[idx], "instruction": instr[idx]})
            loss = torch.nn.functional.cross_entropy(logits(policy, obs), action[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(idx)
        losses.append(tot / len(action))
    return losses


def ppo(sft_state: bytes, p, env_kw: dict, seed: int, pkw: dict) -> tuple:
    """stable-baselines3 PPO from the SFT weights on the training split; returns (policy, curve)."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.policies import ActorCriticPolicy

    from .env import ENV_ID
    from .policy import load_state

    venv = make_vec_env(ENV_ID, n_envs=p.n_envs, seed=seed, env_kwargs={"split": "train", **env_kw})
    model = PPO(ActorCriticPolicy, venv, learning_rate=p.lr, n_steps=p.n_steps, batch_size=p.batch,
                n_epochs=p.epochs, gamma=p.gamma, gae_lambda=0.95, clip_range=p.clip, ent_coef=p.ent_coef,
                vf_coef=p.vf_coef, policy_kwargs=pkw, seed=seed, device="cpu", verbose=0)
    load_state(model.policy, sft_state)
    curve: list[float] = []
    from stable_baselines3.common.callbacks import BaseCallback

    progress = Progress("ppo")

    class Successes(BaseCallback):
        def _on_step(self) -> bool:
            progress(f"{self.num_timesteps} of {p.env_steps} env steps")
            for info, done in zip(self.locals["infos"], self.locals["dones"]):
                if done:
                    curve.append(float(info.get("success", False)))
            return True

    model.learn(total_timesteps=p.env_steps, callback=Successes())
    venv.close()
    return model.policy, curve


def grpo(policy, p, env_kw: dict, seed: int, gen: torch.Generator, ref=None) -> list[float]:
    """GRPO on the training split: per iteration ``groups`` reset seeds x ``group_size`` sampled
    episodes, until ``env_steps`` steps are spent. Returns the success rate of each iteration."""
    from stages.common.optim import Adam

    opt = Adam(policy.parameters(), lr=p.lr)
    rng = np.random.default_rng([seed, 7])
    steps, curve = 0, []
    progress = Progress("grpo")
    while steps < p.env_steps:
        progress(f"{steps} of {p.env_steps} env steps")
        starts = rng.integers(2**31, size=p.groups)
        seeds = np.repeat(starts, p.group_size)
        r = rollout(policy, "train", seeds, env_kw, temperature=1.0, gen=gen, record=True)
        steps += int(r["length"].sum())
        curve.append(float(r["success"].mean()))
        adv_ep = group_advantages(torch.as_tensor(r["success"], dtype=torch.float32),
                                  torch.as_tensor(np.repeat(np.arange(p.groups), p.group_size)))
        if not torch.any(adv_ep != 0):
            continue
        adv = adv_ep[torch.as_tensor(r["episode"])]
        keep = adv != 0
        image = torch.as_tensor(r["image"])[keep]
        instr = torch.as_tensor(r["instruction"])[keep]
        action, old, adv = torch.as_tensor(r["action"])[keep], torch.as_tensor(r["logp"])[keep], adv[keep]
        for _ in range(p.epochs):
            for idx in _batches(len(action), p.batch, gen):
                lg = logits(policy, to_tensor(policy, {"image": image[idx], "instruction": instr[idx]}))
                new = torch.log_softmax(lg, 1).gather(1, action[idx][:, None])[:, 0]
                loss = clipped_surrogate(new, old[idx], adv[idx], p.clip)
                opt.zero_grad()
                loss.backward()
                opt.step()
    return curve


def dpo(policy, reference, p, env_kw: dict, seed: int, gen: torch.Generator) -> list[float]:
    """Iterated DPO on the training split: ``rounds`` rounds, each collecting ``group_size`` sampled
    episodes from each of a set of reset seeds with the current policy (``env_steps / rounds`` steps),
    pairing each seed's successes with its failures, and fitting ``epochs`` passes of the DPO loss
    against the frozen ``reference`` (SFT). Returns each round's success rate."""
    from stages.common.optim import Adam

    opt = Adam(policy.parameters(), lr=p.lr)
    rng = np.random.default_rng([seed, 11])
    curve = []
    progress = Progress("dpo")
    for rnd in range(p.rounds):
        steps, pairs, chunks = 0, [], []
        offset = 0
        while steps < p.env_steps // p.rounds:
            progress(f"round {rnd + 1} of {p.rounds}, {steps} of {p.env_steps // p.rounds} env steps")
            starts = rng.integers(2**31, size=p.groups)
            r = rollout(policy, "train", np.repeat(starts, p.group_size), env_kw, temperature=1.0, gen=gen, record=True)
            steps += int(r["length"].sum())
            curve.append(float(r["success"].mean()))
            succ = r["success"].reshape(p.groups, p.group_size)
            for g in range(p.groups):
                w = [offset + g * p.group_size + k for k in range(p.group_size) if succ[g, k]]
                lo = [offset + g * p.group_size + k for k in range(p.group_size) if not succ[g, k]]
                pairs += list(zip(w, lo))
            r["episode"] = r["episode"] + offset
            offset += len(r["success"])
            chunks.append(r)
        if not pairs:
            continue
        data = {k: np.concatenate([c[k] for c in chunks]) for k in ("image", "instruction", "action", "episode")}
        image, instr = torch.as_tensor(data["image"]), torch.as_tensor(data["instruction"])
        action, episode = torch.as_tensor(data["action"]), torch.as_tensor(data["episode"])
        pairs_t = torch.as_tensor(pairs)
        with torch.no_grad():
            ref_lp = sequence_logp(logits(reference, to_tensor(reference, {"image": image, "instruction": instr})),
                                   action, episode, offset)
        for _ in range(p.epochs):
            for idx in _batches(len(pairs_t), p.batch, gen):
                pb = pairs_t[idx]
                eps = torch.unique(pb.flatten())
                remap = torch.full((offset,), -1, dtype=torch.long)
                remap[eps] = torch.arange(len(eps))
                steps_m = remap[episode] >= 0
                lg = logits(policy, to_tensor(policy, {"image": image[steps_m], "instruction": instr[steps_m]}))
                lp = sequence_logp(lg, action[steps_m], remap[episode[steps_m]], len(eps))
                w, lo = remap[pb[:, 0]], remap[pb[:, 1]]
                loss = dpo_loss(lp[w], lp[lo], ref_lp[pb[:, 0]], ref_lp[pb[:, 1]], p.beta)
                opt.zero_grad()
                loss.backward()
                opt.step()
    return curve
