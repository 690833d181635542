"""The params stage (claimbench/params_check.py): it names every bad value, writes its mark only
when all params are valid, and never touches the mark when they are not."""
from __future__ import annotations

import json
import shutil

import pytest

from claimbench import params_check

from tests.helpers import REPO


@pytest.fixture
def params_tree(tmp_path, monkeypatch):
    """The repository's params files and params models, copied (the models import from here)."""
    for p in [REPO / "params.yaml", *REPO.glob("stages/**/params.json")]:
        (tmp_path / p.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, tmp_path / p.relative_to(REPO))
    monkeypatch.setattr(params_check, "repo_root", lambda: tmp_path)
    for p in tmp_path.glob("stages/*/params.json"):     # the models load from this checkout
        if (REPO / p.parent.relative_to(tmp_path) / "params.py").exists():
            (p.parent / "params.py").write_text("")
    (tmp_path / "stages/corpora/stage.py").write_text("")
    return tmp_path


def test_valid_params_write_the_mark_once(params_tree, capsys):
    assert params_check.problems(params_tree) == []
    assert params_check.main() == 0
    mark = params_tree / params_check.MARKER
    assert mark.read_text() == params_check.MARKER_TEXT
    before = mark.stat().st_mtime_ns
    assert params_check.main() == 0 and mark.stat().st_mtime_ns == before    # unchanged: not rewritten
    assert "params valid" in capsys.readouterr().out


def test_a_bad_value_is_named_and_the_mark_left_alone(params_tree, capsys):
    mark = params_tree / params_check.MARKER
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.write_text("the last valid run's mark\n")
    path = params_tree / "stages/zipf_bigram/params.json"
    data = json.loads(path.read_text())
    data["zipf_bigram"]["paper"]["prepare"]["alphas"] = [-1.0]       # a profile not running now
    path.write_text(json.dumps(data))
    bad = params_check.problems(params_tree)
    assert len(bad) == 1 and bad[0].startswith("zipf_bigram: ") and "zipf_bigram.paper.prepare.alphas[0]" in bad[0]
    assert params_check.main() == 2
    err = capsys.readouterr().err
    assert "no stage has run and no output was touched" in err and "-1.0" in err
    assert mark.read_text() == "the last valid run's mark\n"


def test_bad_common_and_missing_files_are_named(params_tree):
    (params_tree / "params.yaml").write_text("common:\n  profile: huge\n  seed: 0\n  device: auto\n")
    bad = params_check.problems(params_tree)
    assert len(bad) == 1 and "profile" in bad[0] and "huge" in bad[0]
    with pytest.raises(params_check.ParamsError, match="no stages/nosuch/params.json"):
        params_check.check_study(params_tree, "nosuch")


def test_the_stage_depends_on_every_params_file_and_model():
    from claimbench.depgraph import stage_deps

    deps = stage_deps(REPO)
    assert "claimbench/params_check.py" in deps and "stages/zipf_bigram/params.py" in deps
    assert "stages/common/runtime/params.py" not in deps                  # infrastructure: validation only
    assert {p.relative_to(REPO).as_posix() for p in REPO.glob("stages/**/params.json")} <= set(deps)
