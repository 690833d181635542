"""curriculum_rerm params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.common.runtime.params import load_study
from stages.curriculum_rerm.params import CurriculumParams

from tests.helpers import params_error, stops_without_input


def test_default_sizes_are_the_studies_md_ones(real_params):
    _, p = load_study("curriculum_rerm", CurriculumParams, real_params, profile="default")
    r, d = p.train.ridge, p.train.digits
    assert (r.dim, r.n_per_task, r.n_tasks, r.replications) == (100, 20, 5, 20)
    assert (r.lambdas.low, r.lambdas.high) == (1e-3, 10.0)
    assert d.replications >= 10 and d.per_stage == 150 and len(d.levels) == 3 and d.noise == 0.4


def _error(data) -> str:
    return params_error("curriculum_rerm", CurriculumParams, data)


def test_negative_noise_refused(params_copy):
    params_copy["curriculum_rerm"]["default"]["train"]["ridge"]["noise"] = -1.0
    msg = _error(params_copy)
    assert "curriculum_rerm.default.train.ridge.noise = -1.0" in msg and ">= 0" in msg


def test_lambda_grid_must_be_ordered(params_copy):
    params_copy["curriculum_rerm"]["smoke"]["train"]["ridge"]["lambdas"] = {"low": 10.0, "high": 1.0, "points": 3}
    assert "lambdas.low must be < lambdas.high, got 10.0 >= 1.0" in _error(params_copy)


def test_levels_must_end_at_the_target(params_copy):
    params_copy["curriculum_rerm"]["paper"]["train"]["digits"]["levels"] = [0.0, 0.5]
    assert "levels must be increasing and end at 1.0" in _error(params_copy)


def test_too_many_images_refused(params_copy):
    params_copy["curriculum_rerm"]["default"]["train"]["digits"]["per_stage"] = 500
    assert "exceeds the 1797 digits" in _error(params_copy)


def test_string_replications_not_coerced(params_copy):
    params_copy["curriculum_rerm"]["default"]["train"]["ridge"]["replications"] = "20"
    assert "curriculum_rerm.default.train.ridge.replications = '20'" in _error(params_copy)


def test_the_old_per_study_seeds_key_is_refused(params_copy):
    """``seeds`` became ``replications`` (per verdict seed): a file with the old key names it."""
    params_copy["curriculum_rerm"]["smoke"]["train"]["digits"]["seeds"] = 3
    assert "seeds" in _error(params_copy)


def test_evaluate_without_results_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.curriculum_rerm.evaluate",
                        "(made by stage curriculum_rerm-train) is missing; "
                        "run `dvc repro stages/curriculum_rerm/dvc.yaml:curriculum_rerm-train`",
                        stage_env, python_exe)
