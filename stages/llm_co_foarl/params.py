"""Typed parameters of the llm_co_foarl study (stages/llm_co_foarl/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class Sizes(Strict):
    tsp: int = Field(ge=4, le=50, description="TSP nodes")
    kp: int = Field(ge=4, le=20, description="knapsack items (capacity stays below the 512 number tokens)")


class PrepareStep(Strict):
    size: Sizes
    n_train: int = Field(ge=10, description="solved training instances per problem (SFT augments them)")
    n_test: int = Field(ge=10, description="solved test instances per problem")
    workers: int = Field(ge=1, le=2, description="OR-Tools worker processes")
    data_seed: int = Field(ge=0, lt=1000, description="draws the instances, once for every verdict seed "
                                                      "(calibration data sets use seeds >= 1000)")


class TrainStep(Strict):
    d_model: int = Field(ge=16, le=1024)
    heads: int = Field(ge=1, le=16)
    enc_layers: int = Field(ge=1, le=12)
    dec_layers: int = Field(ge=1, le=12)
    entities: bool = Field(description="each entity's (city's, item's) tokens projected to one state, added to "
                                       "its tokens' memory and to the decoder's input where its label is written")
    pointer: bool = Field(description="a label token's logit gets the match of the decoder state with its "
                                      "entity's state (needs entities)")
    sft_steps: int = Field(ge=1, description="SFT (teacher forcing) steps")
    batch: int = Field(ge=2, description="SFT batch (split evenly over the two problems)")
    lr: float = Field(gt=0, le=0.1, description="SFT learning rate (peak, after 50 warm-up steps)")
    sft_decay: bool = Field(description="SFT's learning rate follows a cosine to 0 at its last step")
    rl_steps: int = Field(ge=1, description="FOARL steps (one GRPO update per problem each)")
    rl_prompts: int = Field(ge=1, description="instances per problem per FOARL step")
    rl_group: int = Field(ge=2, description="samples per instance (GRPO group; the official code uses 8)")
    rl_lr: float = Field(gt=0, le=0.1)
    beta: float = Field(ge=0, description="KL coefficient to the SFT model (official code: 0.05)")
    control_lr: float = Field(gt=0, le=0.1, description="learning rate of the equal-compute SFT control")
    curve_every: int = Field(ge=0, description="SFT steps between points of the learning curve (0: none)")
    curve_instances: int = Field(ge=1, description="test instances per problem each curve point decodes greedily")

    @model_validator(mode="after")
    def _heads_divide(self) -> "TrainStep":
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        if self.pointer and not self.entities:
            raise ValueError("pointer needs entities: the pointer term matches the decoder state with entity states")
        return self


class EvaluateStep(Strict):
    samples: int = Field(ge=1, le=64, description="samples per instance for best-of-N (T = 1)")


class LlmCoFoarlParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = LlmCoFoarlParams
