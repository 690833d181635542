"""`claimbench new-study`: the skeleton is written, wired into dvc.yaml and the ledger, runs its
smoke chain, passes its own generated tests, and its placeholder claim shows as not run."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from claimbench.scaffold import ScaffoldError, add_to_ledger, camel, check_name, render

from tests.helpers import REPO


def test_names_are_checked(tmp_path):
    (tmp_path / "dvc.yaml").write_text("stages:\n  ledger:\n    cmd: x\n")
    (tmp_path / "params.yaml").write_text("common: {profile: smoke, seed: 0, device: auto}\n")
    (tmp_path / "stages/taken").mkdir(parents=True)
    (tmp_path / "stages/other").mkdir()
    (tmp_path / "stages/other/dvc.yaml").write_text("stages:\n  staged-train:\n    wdir: ../..\n    cmd: x\n")
    for bad in ("Bad", "a", "1abc", "has-dash", "ends_", "two__under"):
        with pytest.raises(ScaffoldError, match="lower case letters"):
            check_name(tmp_path, bad)
    with pytest.raises(ScaffoldError, match="reserved"):
        check_name(tmp_path, "ledger")
    with pytest.raises(ScaffoldError, match="stages/taken already exists"):
        check_name(tmp_path, "taken")
    with pytest.raises(ScaffoldError, match="already has stages of 'staged': staged-train"):
        check_name(tmp_path, "staged")
    check_name(tmp_path, "jsp_multipolicy")
    assert camel("jsp_multipolicy") == "JspMultipolicy"


def test_render_refuses_a_placeholder_left_unfilled():
    assert render("{{study}}-x", {"study": "s"}) == "s-x"
    with pytest.raises(ScaffoldError, match="without a value"):
        render("{{study}} {{title}}", {"study": "s"})


def test_the_study_goes_into_the_ledgers_deps():
    text = ("stages:\n  ledger:\n    cmd: python -m stages.ledger.build\n"
            "    deps:\n      - stages/a/claims.yaml\n      - reports/a\n    outs:\n      - reports/claims.json\n")
    out = add_to_ledger(text, "new_s")
    deps = out.split("    deps:\n")[1].split("    outs:")[0]
    assert deps.splitlines() == ["      - stages/a/claims.yaml", "      - reports/a",
                                 "      - stages/new_s/claims.yaml", "      - reports/new_s"]
    assert out.endswith("    outs:\n      - reports/claims.json\n")
    with pytest.raises(ScaffoldError, match="no `ledger:` stage"):
        add_to_ledger("stages:\n  a:\n    cmd: x\n", "n")


@pytest.mark.machinery
def test_new_study_runs_its_chain_and_the_ledger_shows_it_not_run(tmp_path):
    from stages.common.runtime.checkout import copy_checkout
    from tests.builds import sh, stage_names

    root = copy_checkout(REPO, tmp_path / "repo", profile="smoke", only=[])
    run = [sys.executable, "-m", "claimbench.cli"]
    out = sh([*run, "new-study", "demo_study", "--title", "a demo"], root).stdout
    for rel in ("stages/demo_study/params.json", "stages/demo_study/claims.yaml", "stages/demo_study/README.md",
                "stages/demo_study/dvc.yaml", "stages/demo_study/paths.py",
                "tests/demo_study/test_params.py", "tests/demo_study/test_determinism.py"):
        assert f"wrote {rel}" in out and (root / rel).is_file()
    readme = (root / "stages/demo_study/README.md").read_text()
    assert [line for line in readme.splitlines() if line.startswith("## ")] == [
        "## Claim", "## Paper and its figures", "## What we run", "## Results", "## Deviations and why",
        "## How to run"]
    # its deps come from its imports, its params and claims validate
    assert "ok" in sh([*run, "deps", "demo_study-evaluate"], root).stdout
    sh([*run, "validate", "demo_study"], root)
    # the same name again is refused, and so is a bad one, before anything is written
    again = sh([*run, "new-study", "demo_study"], root, check=False)
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = sh([*run, "new-study", "Demo-Study"], root, check=False)
    assert bad.returncode == 2 and "lower case letters" in bad.stderr

    # the pipeline runs it, and the ledger lists its placeholder as not run, never as holding
    repro = stage_names(sh(["dvc", "repro"], root).stdout)
    assert sorted(repro) == ["demo_study-evaluate", "demo_study-prepare", "demo_study-train", "ledger", "params"]
    rows = [r for r in json.loads((root / "reports/claims.json").read_text()) if r["study"] == "demo_study"]
    assert [(r["id"], r["measured"], r["verdict"]) for r in rows] == [("placeholder", None, "not run")]
    m = json.loads((root / "reports/demo_study/metrics.json").read_text())
    assert m["best_test_mse"] <= m["baseline_test_mse"]
    assert "up to date" in sh(["dvc", "status"], root).stdout
    # `dvc plots show` draws its declared plot (top-level `plots:`), once
    shown = json.loads(sh(["dvc", "plots", "show", "--json"], root).stdout)["data"]
    assert shown["demo_study: test MSE vs lambda"][0]["content"]["data"]["values"]
    assert "reports/demo_study/test_mse.png" in shown and "reports/demo_study/test_mse.csv" not in shown

    # its generated unit tests pass in the copy, and the study contract covers it by its being there
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "unit",
                           "tests/demo_study", "tests/common/test_study_contract.py", "-k", "demo_study"],
                          cwd=root, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "8 passed" in proc.stdout, proc.stdout[-500:]     # 2 of its own, 6 of the contract
