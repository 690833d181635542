"""Typed parameters of the rppg_cogload study (stages/rppg_cogload/params.json, three profiles)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class Effects(Strict):
    """The load effects chosen by us (L = the recording's load, k = the participant's reactivity)."""
    freq_mod: float = Field(ge=0, le=1, description="neurokit2 ppg_simulate frequency_modulation (spreads the HR peak)")
    hr_gain: float = Field(ge=0, description="heart rate rises by hr_gain * k * L BPM")
    rr_gain: float = Field(ge=0, description="respiratory rate rises by rr_gain * k * L breaths/min")
    hrv_drop: float = Field(ge=0, le=1, description="IBI randomness falls by up to this share")
    blink_drop: float = Field(ge=0, le=1, description="blink rate falls by up to this share")
    resp_amp_drop: float = Field(ge=0, le=1, description="breathing amplitude falls by up to this share")
    hr_jitter: float = Field(ge=0, description="sd of the recording's heart rate around its load value, BPM")
    rr_jitter: float = Field(ge=0, description="sd of the recording's respiratory rate, breaths/min")
    blink_jitter: float = Field(ge=0, description="sd of the log blink rate")
    load_jitter: float = Field(ge=0, description="sd of the recording's load around its task's nominal load")
    tlx_noise: float = Field(ge=0, description="sd of the NASA-TLX sum around 35 + 40 L + bias")


class Setting(Strict):
    """One setting of the remote sensors (see sim.sensors)."""
    motion_scale: float = Field(ge=0, description="head-motion scale")
    motion_shared: float = Field(ge=0, le=1, description="share of the head motion common to both cameras")
    noise_shared: float = Field(ge=0, le=1, description="share of the sensor noise common to both cameras")
    rgb_amp: float = Field(gt=0, description="RGB pulse amplitude (x skin factor), in sensor-noise sd")
    nir_amp: float = Field(gt=0, description="NIR pulse amplitude, in sensor-noise sd")
    resp_motion: float = Field(ge=0, description="head motion in the respiration sensors, relative to the cameras'")
    thermal_noise: float = Field(ge=0, description="thermal respiration sensor noise sd (breathing sd = 1)")
    radar_noise: float = Field(ge=0, description="radar respiration sensor noise sd")
    eye_noise: float = Field(ge=0, description="eye-openness trace noise sd")


class PrepareStep(Strict):
    participants: int = Field(ge=4, le=1000, description="simulated participants (6 tasks each)")
    duration_s: int = Field(ge=20, le=600, description="window length in seconds (CogPhys: 120)")
    fs: int = Field(ge=10, le=250, description="sampling rate, Hz (CogPhys rPPG: 30)")
    effects: Effects
    main: Setting
    shared_noise: Setting = Field(description="the control of fusion_beats_best_camera: both cameras share the head motion and sensor noise")


class TrainStep(Strict):
    folds: int = Field(ge=2, le=20, description="participant-disjoint folds (GroupKFold; CogPhys: 4)")
    classifiers: list[Literal["lr", "svm", "rf"]] = Field(min_length=1, description="sklearn classifiers; lr first")
    rf_trees: int = Field(ge=1, le=2000, description="trees of the random forest")
    permutations: int = Field(ge=1, le=100, description="label permutations for the chance-level control")

    @model_validator(mode="after")
    def _lr_first(self) -> "TrainStep":
        if self.classifiers[0] != "lr" or len(set(self.classifiers)) != len(self.classifiers):
            raise ValueError(f"classifiers must start with 'lr' (the claims read it) and not repeat, got {self.classifiers}")
        return self


class EvaluateStep(Strict):
    example: int = Field(ge=0, description="index of the recording drawn in the signal plot")


class RppgCogloadParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _enough_participants(self) -> "RppgCogloadParams":
        if self.prepare.participants < self.train.folds:
            raise ValueError(f"prepare.participants ({self.prepare.participants}) must be at least train.folds "
                             f"({self.train.folds})")
        if self.evaluate.example >= 6 * self.prepare.participants:
            raise ValueError(f"evaluate.example ({self.evaluate.example}) must be below the number of recordings "
                             f"(6 x {self.prepare.participants})")
        return self


PARAMS = RppgCogloadParams
