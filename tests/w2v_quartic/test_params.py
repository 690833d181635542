"""w2v_quartic params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stages.common.runtime.params import load_study
from stages.w2v_quartic.params import W2VParams
from tests.helpers import params_error

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def real() -> dict:
    from stages.common.runtime.params import read_params

    return read_params(REPO)


def _error(data) -> str:
    return params_error("w2v_quartic", W2VParams, data)


def test_negative_lr_scale_names_key_value_and_bound(real):
    bad = copy.deepcopy(real)
    bad["w2v_quartic"]["default"]["train"]["dynamics"]["lr_scale"] = -0.1
    msg = _error(bad)
    assert "w2v_quartic.default.train.dynamics.lr_scale" in msg and "-0.1" in msg and "> 0" in msg


def test_unknown_key_and_wrong_type(real):
    """Also in a profile that is not active (every profile is validated)."""
    bad = copy.deepcopy(real)
    bad["w2v_quartic"]["paper"]["train"]["gensim"]["windows"] = 5
    msg = _error(bad)
    assert "w2v_quartic.paper.train.gensim.windows: unknown key" in msg and "allowed keys" in msg
    bad = copy.deepcopy(real)
    bad["w2v_quartic"]["smoke"]["evaluate"]["retrieval_k"] = "ten"
    msg = _error(bad)
    assert "w2v_quartic.smoke.evaluate.retrieval_k = 'ten'" in msg and "int >= 1" in msg


def test_cross_field_rules(real):
    bad = copy.deepcopy(real)
    bad["w2v_quartic"]["default"]["train"]["downstream"]["gensim_seeds"] = 1
    assert "gensim_seeds must be at least 2" in _error(bad)
    bad = copy.deepcopy(real)
    bad["w2v_quartic"]["default"]["train"]["realtext"]["max_vocab"] = 4
    assert "max_vocab (4) must be 0 (all) or at least dim (16)" in _error(bad)


@pytest.mark.parametrize("step", ["train", "evaluate"])
def test_stage_exits_2_on_bad_params(real, tmp_path, step):
    """The stage stops with exit status 2 and a message naming the key, before importing torch."""
    from tests.helpers import code_copy

    code_copy(tmp_path, params={"w2v_quartic.default.train.dynamics.init_scale": 0.0})
    env = {**os.environ, "CLAIMBENCH_TRACKING": "off"}
    env.pop("DVC_ROOT", None)
    proc = subprocess.run([sys.executable, "-m", f"stages.w2v_quartic.{step}"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "w2v_quartic.default.train.dynamics.init_scale = 0.0" in proc.stderr
    assert "> 0" in proc.stderr


def test_word2vec_weights_params(real):
    """The word2vec-weighted runs (issue 20): an unknown role or kind, a repeated role, a step
    scale out of range and log_every > steps are named with the key."""
    def with_w2v(**kw):
        bad = copy.deepcopy(real)
        bad["w2v_quartic"]["default"]["train"]["word2vec_weights"].update(kw)
        return _error(bad)

    msg = with_w2v(roles=["downstream", "overlap"])
    assert "w2v_quartic.default.train.word2vec_weights.roles[1] = 'overlap'" in msg and "downstream_rich" in msg
    msg = with_w2v(kinds=["cubic"])
    assert "w2v_quartic.default.train.word2vec_weights.kinds[0] = 'cubic'" in msg
    assert "must not repeat" in with_w2v(roles=["downstream", "downstream"])
    msg = with_w2v(lr_scale=2.5)
    assert "w2v_quartic.default.train.word2vec_weights.lr_scale = 2.5" in msg and "<= 1.9" in msg
    msg = with_w2v(window_weighting="triangular")
    assert "w2v_quartic.default.train.word2vec_weights.window_weighting = 'triangular'" in msg
    assert "log_every (500) must be at most steps (100)" in with_w2v(steps=100, log_every=500)
    _, p = load_study("w2v_quartic", W2VParams, real, profile="default")
    assert "downstream_rich" in p.train.word2vec_weights.roles
