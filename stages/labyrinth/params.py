"""Typed parameters of the labyrinth study (stages/labyrinth/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    n: int = Field(ge=3, le=64, description="maze side (cells) of the base study")
    n_train: int = Field(ge=1, description="training mazes (one optimal demonstration each)")
    n_eval: int = Field(ge=1, description="evaluation mazes (distinct structures)")
    n_test: int = Field(ge=1, description="test mazes (distinct structures)")
    loop_fraction: float = Field(ge=0, le=1, description="share of the walls left after carving that are opened")
    variant_n: int = Field(ge=3, le=64, description="maze side of the variant studies")
    variant_train: int = Field(ge=1, description="training mazes per variant")
    variant_test: int = Field(ge=1, description="test mazes per variant")
    view_radius: int = Field(ge=0, description="partial-observability window radius (cells)")


class TrainStep(Strict):
    epochs: int = Field(ge=1, description="behaviour-cloning epochs")
    lr: float = Field(gt=0, le=1, description="Adam learning rate")
    batch: int = Field(ge=1, description="minibatch size")
    width: int = Field(ge=1, description="convolution channels")
    hidden: int = Field(ge=1, description="hidden units of the head")
    dagger_iterations: int = Field(ge=1, description="DAgger rounds after behaviour cloning")
    dagger_epochs: int = Field(ge=1, description="epochs on the aggregate per DAgger round")
    variant_epochs: int = Field(ge=1, description="behaviour-cloning epochs of each variant")
    steps_per_cell: int = Field(ge=1, description="episode step limit = steps_per_cell * n^2")


class EvaluateStep(Strict):
    gif_frames: int = Field(ge=2, le=400, description="most frames of each rollout GIF")


class LabyrinthParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = LabyrinthParams
