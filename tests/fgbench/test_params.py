"""fgbench params: every profile validates; a bad value stops the stage before any compute with
exit status 2 and a message naming the key, the value and what is allowed."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.fgbench.params import FGBenchParams

from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("fgbench", FGBenchParams, real_params, profile=profile)
    assert p.prepare.source in ("local", "hub")
    assert p.train.text.buckets >= 256


def _error(data) -> str:
    return params_error("fgbench", FGBenchParams, data)


def test_similarity_out_of_range(params_copy):
    params_copy["fgbench"]["default"]["prepare"]["similarity"] = 1.5
    msg = _error(params_copy)
    assert "fgbench.default.prepare.similarity = 1.5" in msg and "<= 1.0" in msg


def test_unknown_source_lists_the_allowed(params_copy):
    params_copy["fgbench"]["smoke"]["prepare"]["sources"] = ["solubility", "qm9"]
    msg = _error(params_copy)
    assert "fgbench.smoke.prepare.sources[1] = 'qm9'" in msg and "'freesolv'" in msg


def test_duplicate_sources_refused(params_copy):
    params_copy["fgbench"]["default"]["prepare"]["sources"] = ["freesolv", "freesolv"]
    assert "sources must be distinct" in _error(params_copy)


def test_string_epochs_not_coerced(params_copy):
    params_copy["fgbench"]["paper"]["train"]["text"]["epochs"] = "8"
    assert "fgbench.paper.train.text.epochs = '8'" in _error(params_copy)


def test_unknown_key_lists_allowed_keys(params_copy):
    params_copy["fgbench"]["default"]["evaluate"]["nboot"] = 10
    msg = _error(params_copy)
    assert "fgbench.default.evaluate.nboot: unknown key" in msg and "n_boot" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.fgbench.prepare", {"fgbench.smoke.prepare.test_fraction": 1.2},
                               stage_env, python_exe)
    assert "fgbench.smoke.prepare.test_fraction = 1.2" in err and "< 1" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.fgbench.train", "dvc repro stages/fgbench/dvc.yaml:fgbench-prepare",
                        stage_env, python_exe)
