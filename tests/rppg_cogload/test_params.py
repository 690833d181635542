"""rppg_cogload params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.rppg_cogload.params import PARAMS
from tests.helpers import params_error


def test_classifiers_must_start_with_lr(params_copy):
    params_copy["rppg_cogload"]["default"]["train"]["classifiers"] = ["svm", "lr"]
    assert "classifiers must start with 'lr'" in params_error("rppg_cogload", PARAMS, params_copy)


def test_unknown_classifier_is_refused(params_copy):
    params_copy["rppg_cogload"]["default"]["train"]["classifiers"] = ["lr", "xgboost"]
    msg = params_error("rppg_cogload", PARAMS, params_copy)
    assert "rppg_cogload.default.train.classifiers" in msg and "xgboost" in msg


def test_fewer_participants_than_folds(params_copy):
    params_copy["rppg_cogload"]["paper"]["train"]["folds"] = 5
    params_copy["rppg_cogload"]["paper"]["prepare"]["participants"] = 4
    assert "must be at least train.folds" in params_error("rppg_cogload", PARAMS, params_copy)


def test_shared_share_above_one(params_copy):
    params_copy["rppg_cogload"]["default"]["prepare"]["shared_noise"]["noise_shared"] = 1.5
    msg = params_error("rppg_cogload", PARAMS, params_copy)
    assert "rppg_cogload.default.prepare.shared_noise.noise_shared" in msg and "1" in msg
