"""fgbench params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.fgbench.params import FGBenchParams

from tests.helpers import params_error


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


def test_negative_data_seed_refused(params_copy):
    params_copy["fgbench"]["default"]["prepare"]["data_seed"] = -1
    msg = _error(params_copy)
    assert "fgbench.default.prepare.data_seed = -1" in msg and ">= 0" in msg
