"""Typed parameters of the rl_vla study (stages/rl_vla/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class EnvParams(Strict):
    grid: int = Field(ge=4, le=12, description="cells a side of the table")
    cell: int = Field(ge=6, le=16, description="pixels a side of a cell")
    max_steps: int = Field(ge=10, le=500, description="steps before an episode is cut")


class PrepareStep(Strict):
    n_demos: int = Field(ge=4, description="scripted expert episodes (SFT data) on the training split")
    n_eval: int = Field(ge=4, description="evaluation episodes per split (the same reset seeds for every method)")
    more_demo_steps: int = Field(ge=16, description="environment steps of further expert episodes for the control sft_more "
                                 "(the RL arms' budget: train.ppo.env_steps)")


class ArchParams(Strict):
    channels: int = Field(ge=2, le=256, description="channels of the patch embedding (FiLM-modulated)")
    features: int = Field(ge=4, le=2048, description="units of the policy's feature layer")


class SftParams(Strict):
    epochs: int = Field(ge=1, description="passes over the demonstrations")
    batch: int = Field(ge=2, description="steps per minibatch")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")


class SftMoreParams(Strict):
    epochs: int = Field(ge=1, le=50, description="passes over the further demonstrations")
    batch: int = Field(ge=2, description="steps per minibatch")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")


class PpoParams(Strict):
    env_steps: int = Field(ge=64, description="environment steps (stable-baselines3 total_timesteps)")
    n_envs: int = Field(ge=1, le=64, description="parallel environments (DummyVecEnv)")
    n_steps: int = Field(ge=8, description="steps per environment per rollout")
    batch: int = Field(ge=8, description="minibatch size")
    epochs: int = Field(ge=1, le=50, description="passes over each rollout")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")
    gamma: float = Field(gt=0, le=1, description="discount")
    clip: float = Field(gt=0, lt=1, description="PPO ratio clip")
    ent_coef: float = Field(ge=0, description="entropy bonus")
    vf_coef: float = Field(ge=0, description="value-loss weight")


class GrpoParams(Strict):
    env_steps: int = Field(ge=64, description="environment steps (same budget as PPO)")
    groups: int = Field(ge=1, description="reset seeds per iteration")
    group_size: int = Field(ge=2, description="sampled episodes per reset seed (the group)")
    epochs: int = Field(ge=1, le=50, description="passes over each iteration's steps")
    batch: int = Field(ge=8, description="minibatch size (steps)")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")
    clip: float = Field(gt=0, lt=1, description="ratio clip")


class DpoParams(Strict):
    env_steps: int = Field(ge=64, description="environment steps spent collecting preference pairs (same budget as PPO)")
    rounds: int = Field(ge=1, le=100, description="collect-then-fit rounds (1 = offline DPO on SFT rollouts)")
    groups: int = Field(ge=1, description="reset seeds per collection batch")
    group_size: int = Field(ge=2, description="sampled episodes per reset seed (successes are paired with failures)")
    epochs: int = Field(ge=1, le=50, description="passes over a round's pairs")
    batch: int = Field(ge=1, description="pairs per minibatch")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")
    beta: float = Field(gt=0, description="DPO inverse temperature")


class TrainStep(Strict):
    arch: ArchParams
    sft: SftParams
    sft_more: SftMoreParams
    ppo: PpoParams
    grpo: GrpoParams
    dpo: DpoParams

    @model_validator(mode="after")
    def _same_budget(self) -> "TrainStep":
        budgets = {"ppo": self.ppo.env_steps, "grpo": self.grpo.env_steps, "dpo": self.dpo.env_steps}
        if len(set(budgets.values())) != 1:
            raise ValueError(f"ppo, grpo and dpo must get the same env_steps, got {budgets}")
        if self.ppo.batch > self.ppo.n_envs * self.ppo.n_steps:
            raise ValueError(f"ppo.batch ({self.ppo.batch}) must be <= n_envs * n_steps ({self.ppo.n_envs * self.ppo.n_steps})")
        return self


class EvaluateStep(Strict):
    temperature: float = Field(ge=0, le=2, description="evaluation sampling temperature (0 = argmax); the official code's vla_temperature_eval is 0.6")
    level: float = Field(gt=0.5, lt=1, description="level of the paired t intervals")
    gif_steps: int = Field(ge=2, le=200, description="frames of the rollout GIF")


class RlVlaParams(Strict):
    env: EnvParams
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _control_budget(self) -> "RlVlaParams":
        if self.prepare.more_demo_steps != self.train.ppo.env_steps:
            raise ValueError(f"prepare.more_demo_steps ({self.prepare.more_demo_steps}) must equal train.ppo.env_steps "
                             f"({self.train.ppo.env_steps}): the control sft_more gets the RL arms' budget")
        return self


PARAMS = RlVlaParams
