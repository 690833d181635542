"""ensemble_tail params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.ensemble_tail.params import EnsembleTailParams

from tests.helpers import params_error, stops_without_input


def _error(data) -> str:
    return params_error("ensemble_tail", EnsembleTailParams, data)


def test_tail_index_must_exceed_one(params_copy):
    params_copy["ensemble_tail"]["default"]["train"]["lp"]["tail_index"] = 0.8
    msg = _error(params_copy)
    assert "ensemble_tail.default.train.lp.tail_index = 0.8" in msg and "> 1" in msg


def test_compare_n_must_be_in_grid(params_copy):
    params_copy["ensemble_tail"]["default"]["evaluate"]["compare_n"] = 300
    assert "evaluate.compare_n = 300 must be one of train.n_grid" in _error(params_copy)


def test_costs_need_unique_optimum(params_copy):
    params_copy["ensemble_tail"]["smoke"]["train"]["lp"]["costs"] = [0.0, 0.05, 0.6]
    assert "costs must have a unique optimum" in _error(params_copy)


def test_subsample_larger_than_half_the_smallest_n_refused(params_copy):
    params_copy["ensemble_tail"]["default"]["train"]["ensembles"]["k"] = 20
    assert "the smallest n (25) must be >= the largest subsample size x 2 (ROVEs splits the data) = 40" \
        in _error(params_copy)


def test_grid_must_increase(params_copy):
    params_copy["ensemble_tail"]["paper"]["train"]["n_grid"] = [25, 100, 50]
    assert "n_grid must be strictly increasing, got [25, 100, 50]" in _error(params_copy)


def test_regression_needs_true_model(params_copy):
    params_copy["ensemble_tail"]["default"]["train"]["regression"]["sq_dists"] = [0.1, 0.2]
    assert "sq_dists must contain 0" in _error(params_copy)


def test_string_replications_not_coerced(params_copy):
    params_copy["ensemble_tail"]["default"]["train"]["replications"] = "2000"
    assert "ensemble_tail.default.train.replications = '2000'" in _error(params_copy)


def test_evaluate_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.ensemble_tail.evaluate",
                        "data/ensemble_tail/tails.json (made by stage ensemble_tail-train) is missing; "
                        "run `dvc repro stages/ensemble_tail/dvc.yaml:ensemble_tail-train`", stage_env, python_exe)


def test_bag_fraction_must_be_a_fraction(params_copy):
    params_copy["ensemble_tail"]["default"]["train"]["ensembles"]["bag_fraction"] = 1.5
    msg = _error(params_copy)
    assert "ensemble_tail.default.train.ensembles.bag_fraction = 1.5" in msg and "less than or equal to 1" in msg
