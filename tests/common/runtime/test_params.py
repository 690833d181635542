"""stages.common.runtime.params: validation of params.yaml, error messages, flatten, and the stage CLI path."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from stages.common.runtime.params import (PROFILES, ParamsError, flatten, load_common,
                                  load_study, read_params_file)
from stages.zipf_bigram.params import SignGrid, ZipfParams
from tests.helpers import code_copy

REPO = Path(__file__).resolve().parents[3]


# --------------------------------------------------------------------------------------
# the real params.yaml
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_real_params_every_profile_validates(real_params, profile):
    """Every profile of the real params.yaml validates and returns the values written there."""
    common, p = load_study("zipf_bigram", ZipfParams, real_params, profile=profile)
    raw = real_params["zipf_bigram"][profile]
    assert isinstance(p, ZipfParams)
    assert list(p.prepare.alphas) == raw["prepare"]["alphas"]
    assert list(p.prepare.log2_ds) == raw["prepare"]["log2_ds"]
    assert p.train.epsilon == raw["train"]["epsilon"]
    assert p.train.sign_grid.size == raw["train"]["sign_grid"]["size"]
    assert common.profile == real_params["common"]["profile"]


def test_real_params_active_profile_is_common_profile(real_params):
    """Without an explicit profile, load_study returns the profile named by common.profile."""
    common, p = load_study("zipf_bigram", ZipfParams, real_params)
    _, expected = load_study("zipf_bigram", ZipfParams, real_params, profile=common.profile)
    assert p == expected


def test_read_params_file_reads_the_given_path(tmp_path, real_params):
    """read_params_file parses the file it is given; a missing file is a ParamsError naming it."""
    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(real_params))
    assert read_params_file(f) == real_params
    with pytest.raises(ParamsError, match="not found"):
        read_params_file(tmp_path / "nope.yaml")


# --------------------------------------------------------------------------------------
# bad values: the message names the key, the value and what is allowed
# --------------------------------------------------------------------------------------
def _error(data, profile=None) -> str:
    with pytest.raises(ParamsError) as info:
        load_study("zipf_bigram", ZipfParams, data, profile=profile)
    return str(info.value)


def test_negative_alpha_names_key_value_and_bound(params_copy):
    """alphas[0] = -1.0 -> message has the dotted key with index, the value and '>= 0'."""
    params_copy["zipf_bigram"]["default"]["prepare"]["alphas"][0] = -1.0
    msg = _error(params_copy)
    assert "zipf_bigram.default.prepare.alphas[0]" in msg
    assert "-1.0" in msg
    assert ">= 0" in msg


def test_bad_value_in_inactive_profile_still_fails(params_copy):
    """All profiles are validated: a bad value in 'paper' fails even when 'smoke' is requested."""
    params_copy["zipf_bigram"]["paper"]["prepare"]["alphas"][1] = 9.0
    msg = _error(params_copy, profile="smoke")
    assert "zipf_bigram.paper.prepare.alphas[1]" in msg
    assert "9.0" in msg and "<= 4" in msg


def test_string_instead_of_int_list(params_copy):
    """log2_ds: 'abc' -> message names the key, the value and says a list of ints is allowed."""
    params_copy["zipf_bigram"]["default"]["prepare"]["log2_ds"] = "abc"
    msg = _error(params_copy)
    assert "zipf_bigram.default.prepare.log2_ds" in msg
    assert "'abc'" in msg
    assert "list[int" in msg


def test_strict_no_silent_coercion_of_string_numbers(params_copy):
    """Strict models: epsilon '0.001' (a string) is an error, not silently coerced to a float."""
    params_copy["zipf_bigram"]["smoke"]["train"]["epsilon"] = "0.001"
    msg = _error(params_copy)
    assert "zipf_bigram.smoke.train.epsilon" in msg and "'0.001'" in msg


def test_nested_bound_names_nested_key(params_copy):
    """sign_grid.lo = 0 -> the key is the full nested path and the bound is '> 0'."""
    params_copy["zipf_bigram"]["default"]["train"]["sign_grid"]["lo"] = 0.0
    msg = _error(params_copy)
    assert "zipf_bigram.default.train.sign_grid.lo = 0.0" in msg
    assert "> 0" in msg


def test_unsorted_log2_ds_is_rejected(params_copy):
    """The model validator rejects a log2_ds list that is not strictly increasing."""
    params_copy["zipf_bigram"]["default"]["prepare"]["log2_ds"] = [8, 7]
    msg = _error(params_copy)
    assert "zipf_bigram.default.prepare" in msg and "strictly increasing" in msg


def test_unknown_key_lists_allowed_keys(params_copy):
    """An unknown key -> 'unknown key' with the key's path and the model's allowed keys."""
    params_copy["zipf_bigram"]["default"]["prepare"]["alpahs"] = [1.0]
    msg = _error(params_copy)
    assert "zipf_bigram.default.prepare.alpahs" in msg
    assert "unknown key" in msg
    for key in ("alphas", "log2_ds", "corpus_log2_d", "corpus_pairs", "realtext_vocab"):
        assert key in msg.split("allowed keys:")[1]


def test_missing_key_is_named(params_copy):
    """A removed required key -> 'missing' with the key's path."""
    del params_copy["zipf_bigram"]["smoke"]["train"]["epsilon"]
    msg = _error(params_copy)
    assert "zipf_bigram.smoke.train.epsilon: missing" in msg


def test_unknown_profile_name(params_copy):
    """A profile name outside smoke/default/paper -> 'unknown profile' and the allowed names."""
    params_copy["zipf_bigram"]["huge"] = params_copy["zipf_bigram"]["paper"]
    msg = _error(params_copy)
    assert "zipf_bigram.huge" in msg and "unknown profile" in msg
    assert all(p in msg for p in PROFILES)


def test_missing_profile(params_copy):
    """A study section without one of the three profiles -> 'missing profile' naming it."""
    del params_copy["zipf_bigram"]["paper"]
    msg = _error(params_copy)
    assert "zipf_bigram.paper" in msg and "missing profile" in msg


def test_missing_study_section(params_copy):
    """No section for the study -> a ParamsError naming the study."""
    del params_copy["zipf_bigram"]
    assert "'zipf_bigram'" in _error(params_copy)


def test_bad_common_profile(params_copy):
    """common.profile = 'huge' -> message names common.profile, the value and the allowed names."""
    params_copy["common"]["profile"] = "huge"
    msg = _error(params_copy)
    assert "common.profile" in msg and "'huge'" in msg
    assert "'smoke'" in msg and "'default'" in msg and "'paper'" in msg


def test_bad_verdict_seeds_and_missing_common(params_copy):
    """A negative seed, a calibration seed (>= 1000) among the verdict seeds, a seed listed twice,
    an empty list, the old single `seed`: each named; no common section: a ParamsError naming it."""
    seeds = params_copy["common"]["seeds"]
    for bad, message in ((-1, r"common\.seeds\.default\[1\] = -1.*>= 0"),
                         (1000, r"default: 1000 is a calibration seed \(>= 1000\).*CLAIMBENCH_CALIBRATION=1")):
        seeds["default"] = [0, bad]
        with pytest.raises(ParamsError, match=message):
            load_common(params_copy)
    seeds["default"] = [0, 1, 1]
    with pytest.raises(ParamsError, match=r"default: a seed is listed twice in \[0, 1, 1\]"):
        load_common(params_copy)
    seeds["default"] = []
    with pytest.raises(ParamsError, match=r"common\.seeds\.default"):
        load_common(params_copy)
    seeds["default"] = [0, 1, 2, 3, 4]
    params_copy["common"]["seed"] = 0
    with pytest.raises(ParamsError, match=r"common\.seed"):
        load_common(params_copy)
    del params_copy["common"]
    with pytest.raises(ParamsError, match="common"):
        load_common(params_copy)


def test_calibration_seeds_only_when_asked(params_copy, monkeypatch):
    params_copy["common"]["seeds"]["default"] = [1000, 1001]
    monkeypatch.setenv("CLAIMBENCH_CALIBRATION", "1")
    assert load_common(params_copy).seeds.default == [1000, 1001]
    monkeypatch.delenv("CLAIMBENCH_CALIBRATION")
    with pytest.raises(ParamsError, match="calibration seed"):
        load_common(params_copy)


def test_valid_common_roundtrip_and_the_active_seeds():
    """A valid common section validates to the same values; the verdict seeds are the profile's,
    and a study not yet on the contract v2 runs the first of them."""
    data = {"profile": "smoke", "seeds": {"smoke": [3, 4], "default": [0, 1, 2], "paper": [0]},
            "device": "cpu"}
    c = load_common({"common": data})
    assert c.model_dump() == data
    assert c.verdict_seeds == [3, 4] and c.seed == 3


def test_the_committed_verdict_seeds():
    """VERDICTS.md: smoke [0, 1], default [0 .. 4], paper ten seeds."""
    c = load_common(read_params_file(REPO / "params.yaml"))
    assert (c.seeds.smoke, c.seeds.default, c.seeds.paper) == ([0, 1], list(range(5)), list(range(10)))


# --------------------------------------------------------------------------------------
# flatten
# --------------------------------------------------------------------------------------
def test_flatten_nested_dict_keeps_lists():
    """{'a': {'b': 1, 'c': [1, 2]}, 'd': 'x'} -> dotted keys, lists kept as values."""
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "d": "x"}) == {"a.b": 1, "a.c": [1, 2], "d": "x"}


def test_flatten_model_and_deep_nesting():
    """A pydantic model flattens through model_dump; three levels give three-part keys."""
    assert flatten(SignGrid(lo=0.5, hi=2.0, size=3, budget_ratio=1.05), "g.") == {
        "g.lo": 0.5, "g.hi": 2.0, "g.size": 3, "g.budget_ratio": 1.05}
    assert flatten({"x": {"y": {"z": None}}}) == {"x.y.z": None}


# --------------------------------------------------------------------------------------
# the layout: params.yaml holds common, each study its own file beside its code
# --------------------------------------------------------------------------------------
def test_each_study_reads_only_its_own_file(tmp_path):
    """A stage reads params.yaml (common) and its study's file; another study's broken file does
    not stop it, its own broken file does, naming the file."""
    from stages.common.runtime.params import read_params

    code_copy(tmp_path)
    (tmp_path / "stages/nac_b/params.json").write_text('{"nac_b": [not, json\n')
    data = read_params(tmp_path, studies=["zipf_bigram"])
    assert set(data) == {"common", "zipf_bigram"}
    load_study("zipf_bigram", ZipfParams, data)
    with pytest.raises(ParamsError, match=r"stages/nac_b/params.json: not valid JSON: Expecting value: line 1"):
        read_params(tmp_path, studies=["nac_b"])


def test_study_file_must_hold_one_key_named_after_the_study(tmp_path):
    from stages.common.runtime.params import read_params, read_study_file

    code_copy(tmp_path)
    path = tmp_path / "stages/zipf_bigram/params.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({"zipf": data["zipf_bigram"]}))
    with pytest.raises(ParamsError, match=r"must hold exactly one top-level key, 'zipf_bigram' \(found 'zipf'\)"):
        read_study_file("zipf_bigram", tmp_path)
    (tmp_path / "stages/zipf_bigram/params.json").unlink()
    with pytest.raises(ParamsError, match="stages/zipf_bigram/params.json: params file of study 'zipf_bigram' not found"):
        read_params(tmp_path, studies=["zipf_bigram"])


def test_dump_params_is_json_that_keeps_short_lists_on_one_line(tmp_path):
    """A params file as dump_params writes it parses back to the same data, key order kept; a
    list or mapping that fits in the width stays on its line, a longer one is split."""
    from stages.common.runtime.params import dump_params, write_params_file

    data = {"s": {"smoke": {"alphas": [0.5, 1.0, 2.0], "grid": {"lo": 0.0625, "size": 25}},
                  "long": list(range(40)), "empty": {}, "name": "x"}}
    text = dump_params(data)
    assert json.loads(text) == data and list(json.loads(text)["s"]) == ["smoke", "long", "empty", "name"]
    assert '"alphas": [0.5, 1.0, 2.0],' in text and '"grid": {"lo": 0.0625, "size": 25}' in text
    assert '"long": [\n' in text and max(len(line) for line in text.splitlines()) <= 100
    assert dump_params({"a": 1}) == '{"a": 1}'
    write_params_file(tmp_path / "p.json", data)
    write_params_file(tmp_path / "p.yaml", data)
    assert read_params_file(tmp_path / "p.json") == data == read_params_file(tmp_path / "p.yaml")


def test_params_files_are_found_for_studies_and_the_corpora():
    from stages.common.runtime.params import params_file, study_params_files

    files = study_params_files(REPO)
    assert files["zipf_bigram"] == REPO / "stages/zipf_bigram/params.json"
    assert files["corpora"] == REPO / "stages/corpora/params.json"
    assert params_file("corpora", REPO) == files["corpora"]
    assert "common" not in files
    top = yaml.safe_load((REPO / "params.yaml").read_text())
    assert set(top) == {"common"}, "params.yaml holds only `common`; studies keep theirs beside their code"


def test_validate_format_lays_out_a_file_dvc_wrote_on_one_line(tmp_path, sub_env, python_exe):
    """`dvc exp run -S` rewrites a study's params file on one line (json.dump); `claimbench
    validate --format` lays it out again with the same values, and leaves the others alone."""
    code_copy(tmp_path)
    path = tmp_path / "stages/nac_b/params.json"
    laid_out, data = path.read_text(), json.loads(path.read_text())
    path.write_text(json.dumps(data))
    other = (tmp_path / "stages/zipf_bigram/params.json").stat().st_mtime_ns
    res = subprocess.run([python_exe, "-m", "claimbench.cli", "validate", "--format"], cwd=tmp_path,
                         env=sub_env(), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "formatted: " in res.stdout and res.stdout.count("formatted: ") == 1
    assert path.read_text() == laid_out and json.loads(path.read_text()) == data
    assert (tmp_path / "stages/zipf_bigram/params.json").stat().st_mtime_ns == other


def test_error_names_the_file_the_key_is_in(params_copy):
    params_copy["zipf_bigram"]["default"]["prepare"]["alphas"] = [-1.0]
    with pytest.raises(ParamsError) as info:
        load_study("zipf_bigram", ZipfParams, params_copy)
    assert str(info.value).startswith("invalid parameters in stages/zipf_bigram/params.json:")
    params_copy["common"]["seeds"]["smoke"] = [-1]
    with pytest.raises(ParamsError, match="invalid parameters in params.yaml:"):
        load_study("zipf_bigram", ZipfParams, params_copy)


# --------------------------------------------------------------------------------------
# the stage CLI stops before any compute
# --------------------------------------------------------------------------------------
def test_stage_cli_exits_2_before_compute(tmp_path, sub_env, python_exe):
    """A corrupted copy of the repo: `python -m stages.zipf_bigram.prepare` exits 2, names the key, writes no data/."""
    code_copy(tmp_path, params={"zipf_bigram.smoke.prepare.corpus_pairs": 10})   # < 1000
    env = sub_env(MLFLOW_TRACKING_URI=f"sqlite:///{(tmp_path / 'mlflow.db').as_posix()}",
                  CLAIMBENCH_ARTIFACT_ROOT=(tmp_path / "artifacts").as_uri())
    res = subprocess.run([python_exe, "-m", "stages.zipf_bigram.prepare"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert "zipf_bigram.smoke.prepare.corpus_pairs" in res.stderr
    assert "10" in res.stderr and ">= 1000" in res.stderr
    assert not (tmp_path / "data").exists()
    assert not (tmp_path / "reports").exists()
    assert not (tmp_path / "mlflow.db").exists()
