"""attr_analogy params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.attr_analogy.params import AttrParams

from tests.helpers import code_copy, params_error, run_module


def _error(data) -> str:
    return params_error("attr_analogy", AttrParams, data)


def test_power_out_of_range_names_key_value_and_bound(params_copy):
    params_copy["attr_analogy"]["default"]["train"]["power"] = 2.0
    msg = _error(params_copy)
    assert "attr_analogy.default.train.power = 2.0" in msg and "<= 1" in msg


def test_negative_noise_level_names_nested_key(params_copy):
    params_copy["attr_analogy"]["smoke"]["train"]["noise"]["sigmas"][1] = -0.5
    msg = _error(params_copy)
    assert "attr_analogy.smoke.train.noise.sigmas[1] = -0.5" in msg and ">= 0" in msg


def test_string_k_max_is_not_coerced(params_copy):
    params_copy["attr_analogy"]["paper"]["train"]["k_max"] = "40"
    msg = _error(params_copy)
    assert "attr_analogy.paper.train.k_max = '40'" in msg


def test_saturation_corpus_must_be_a_spread(params_copy):
    params_copy["attr_analogy"]["default"]["train"]["saturation_corpus"] = "small"
    msg = _error(params_copy)
    assert "attr_analogy.default" in msg and "saturation_corpus ('small') must be one of spreads" in msg


def test_k_report_must_be_a_scored_k(params_copy):
    params_copy["attr_analogy"]["default"]["evaluate"]["k_report"] = 77
    msg = _error(params_copy)
    assert "evaluate.k_report (77)" in msg


def test_stage_exits_2_when_a_named_corpus_is_missing(tmp_path, stage_env, python_exe):
    """Valid params but no corpus folder: exit 2 naming the corpus and the stage that makes it
    (the stage wrapper reads the producer from dvc.yaml), not a traceback."""
    root = code_copy(tmp_path)
    res = run_module(root, "stages.attr_analogy.train", stage_env, python_exe)
    assert res.returncode == 2, res.stderr
    assert ("data/corpora/attributes (made by stage corpora-attributes) is missing; run "
            "`dvc repro stages/corpora/dvc.yaml:corpora-attributes`") in res.stderr
    assert "Traceback" not in res.stderr


def test_pair_base_words_must_be_positive_or_null(params_copy):
    params_copy["attr_analogy"]["default"]["train"]["pair_base_words"] = 0
    msg = _error(params_copy)
    assert "attr_analogy.default.train.pair_base_words = 0" in msg and ">= 1" in msg


def test_analogy_seed_must_be_a_non_negative_integer(params_copy):
    params_copy["attr_analogy"]["smoke"]["train"]["analogy_seed"] = -1
    msg = _error(params_copy)
    assert "attr_analogy.smoke.train.analogy_seed = -1" in msg and ">= 0" in msg
