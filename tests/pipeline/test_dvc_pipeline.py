"""The whole DAG on the smoke profile, driven by `dvc repro`: the session's one build and copies of
it. What re-runs after an edit: a param, an output-shaping common module (exactly its users), an
infrastructure module (nothing)."""
from __future__ import annotations

import json
import re
import time

import pytest

from .conftest import set_line, sh, stage_names, stale, tree_digest

pytestmark = pytest.mark.pipeline


def ran_stages(output: str) -> list[str]:
    return stage_names(output)


def test_dvc_repro_smoke(smoke_built, built_copy):
    from stages.common.runtime.dvcfile import load_stages

    # the session's one full `dvc repro` from nothing (smoke_built); the rest on a copy of it
    built, out = smoke_built
    repo_copy = built_copy
    ran = ran_stages(out)
    assert sorted(ran) == sorted(load_stages(built)) and ran[-1] == "ledger", out
    assert ran.index("zipf_bigram-prepare") < ran.index("zipf_bigram-train") < ran.index("zipf_bigram-evaluate")

    # the ledger: every claim evaluated from a measured figure
    rows = json.loads((repo_copy / "reports/claims.json").read_text())
    assert {r["id"] for r in rows} >= {"gd_slope_alpha1", "sign_slope_alpha1", "gd_over_sign_at_dmax",
                                      "gd_dimension_free_alpha2"}
    for r in rows:
        assert isinstance(r["measured"], float), r
        assert r["verdict"] in ("holds", "fails", "inconclusive", "not specific", "retired"), r   # judged
        assert r["profile"] == "smoke"
        for key in ("study", "statement", "level", "metric", "op", "threshold", "paper", "fidelity", "why"):
            assert key in r
    assert "| zipf_bigram |" in (repo_copy / "reports/claims.md").read_text()
    page = (repo_copy / "reports/index.html").read_text()
    assert "data:image" not in page                                                # plots are files beside it
    body = page.split("<body>")[1]
    # nothing loads from the network (the papers' arXiv/OpenReview pages are plain links, <a href>)
    assert not re.search(r"""(src|srcset|poster|data)\s*=\s*["']?https?:|url\(\s*["']?https?:|<link[^>]+href=["']?https?:""", body)
    assert all(re.match(r"https://(arxiv\.org/abs/|openreview\.net/forum\?id=)", u)
               for u in re.findall(r"""<a [^>]*href=["'](https?:[^"']+)""", body)), "a link other than a paper's"
    assert 'loading="lazy"' in page and list((repo_copy / "reports/ledger/thumbs/zipf_bigram").glob("*.webp"))

    # a second repro is a no-op (in a copy of the built repo too), and fast
    t0 = time.perf_counter()
    again = sh(["dvc", "repro"], repo_copy).stdout
    noop_s = time.perf_counter() - t0
    assert ran_stages(again) == []
    print(f"no-op dvc repro: {noop_s:.2f}s")
    assert "are up to date" in sh(["dvc", "status"], repo_copy).stdout

    # changing one evaluate param re-runs only what depends on it
    set_line(repo_copy / "stages/zipf_bigram/params.json", "\"fit_min_log2_d\": 7", "\"fit_min_log2_d\": 8")
    out = sh(["dvc", "repro"], repo_copy).stdout
    assert ran_stages(out) == ["params", "zipf_bigram-evaluate", "ledger"]

    # MLflow: experiment zipf_bigram with one run per stage, tagged and with metrics and plots
    from mlflow.tracking import MlflowClient

    c = MlflowClient(tracking_uri=f"sqlite:///{repo_copy / 'mlruns.db'}")
    exp = c.get_experiment_by_name("zipf_bigram")
    runs = c.search_runs([exp.experiment_id])
    assert sorted(r.info.run_name for r in runs) == ["evaluate", "evaluate", "prepare", "train"]
    lock = "".join(p.read_text() for p in sorted(repo_copy.glob("**/dvc.lock")))   # the root's and each study's
    for r in runs:
        for tag in ("mlflow.source.git.commit", "git.dirty", "dvc.stage", "profile", "params.hash"):
            assert tag in r.data.tags
        assert r.data.tags["profile"] == "smoke"
        assert "params" and any(k.startswith("zipf_bigram.") for k in r.data.params)
        deps = {k[4:]: v for k, v in r.data.tags.items() if k.startswith("dep.")}
        assert deps, r.data.tags
        for path, md5 in deps.items():
            if path.startswith("data/"):
                assert md5 in lock, f"{path}: tagged hash {md5} differs from dvc.lock"
    ev = [r for r in runs if r.info.run_name == "evaluate"][0]
    assert "gd.alpha_1.slope" in ev.data.metrics
    arts = [a.path for a in c.list_artifacts(ev.info.run_id, "outs/reports/zipf_bigram")]
    assert any(a.endswith("iterations_vs_d.png") for a in arts)
    prep = [r for r in runs if r.info.run_name == "prepare"][0]
    assert c.get_run(prep.info.run_id).inputs.dataset_inputs
    tr = [r for r in runs if r.info.run_name == "train"][0]
    assert len(c.get_metric_history(tr.info.run_id, "realtext.relerr.gd")) > 10


def test_exp_run_set_param_and_params_diff(built_copy):
    """The README's commands on a study's JSON params file: `dvc exp run -S FILE:KEY=VALUE` sets one
    value and re-runs only its stage and the ledger, `dvc params diff` names the change, and a
    profile switch is seen as a change of every stage's `common` and a new section of its params."""
    from stages.common.runtime.dvcfile import load_stages

    repo = built_copy
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-qm", "built"], repo)
    key = "zipf_bigram.smoke.evaluate.fit_min_log2_d"
    out = sh(["dvc", "exp", "run", "-S", f"stages/zipf_bigram/params.json:{key}=8"], repo).stdout
    assert ran_stages(out) == ["params", "zipf_bigram-evaluate", "ledger"]
    data = json.loads((repo / "stages/zipf_bigram/params.json").read_text())
    assert data["zipf_bigram"]["smoke"]["evaluate"]["fit_min_log2_d"] == 8
    diff = sh(["dvc", "params", "diff", "--md"], repo).stdout
    row = [line for line in diff.splitlines() if key in line]
    assert row and row[0].replace(" ", "").endswith("|7|8|"), diff
    sh(["git", "checkout", "--", "."], repo)
    set_line(repo / "params.yaml", "profile: smoke", "profile: default")        # what -S common.profile=default writes
    status = sh(["dvc", "status"], repo).stdout
    assert "stages/zipf_bigram/params.json:\n\t\t\tnew:                zipf_bigram.default.prepare" in status, status
    assert stale(repo) == set(load_stages(repo)), status


def test_bad_param_stops_before_compute_and_touches_no_output(built_copy):
    """A rejected param under plain `dvc repro`: the params stage refuses it before DVC removes
    any stage's outs, so every file under data/ and reports/ is byte-identical afterwards."""
    repo_copy = built_copy
    assert ran_stages(sh(["dvc", "repro"], repo_copy).stdout) == []
    lock_before = (repo_copy / "dvc.lock").read_text()
    files_before = tree_digest(repo_copy)
    assert "data/zipf_bigram/results.json" in files_before and "reports/params.ok" in files_before
    set_line(repo_copy / "stages/zipf_bigram/params.json", "\"alphas\": [0.0, 0.5, 1.0, 2.0]", "\"alphas\": [-0.5, 1.0, 2.0]")
    proc = sh(["dvc", "repro"], repo_copy, check=False)
    assert proc.returncode != 0
    err = proc.stdout + proc.stderr
    assert "zipf_bigram.smoke.prepare.alphas[0]" in err and "-0.5" in err and ">= 0" in err
    assert ran_stages(proc.stdout) == ["params"], err           # no study stage started
    assert (repo_copy / "dvc.lock").read_text() == lock_before
    assert tree_digest(repo_copy) == files_before
    # the same through the Prefect flow: its params stage fails, nothing else runs
    flow = sh([__import__("sys").executable, "-m", "flows.pipeline", "--retries", "0"], repo_copy, check=False)
    assert flow.returncode != 0 and "stage params failed (exit status 2)" in flow.stdout + flow.stderr
    assert tree_digest(repo_copy) == files_before


def test_infrastructure_edits_rerun_nothing_and_a_common_module_reruns_its_users(built_copy):
    """Editing the tracking helper (or any infrastructure module) leaves `dvc status` clean;
    editing fits.py marks stale exactly the stages whose modules import it."""
    from claimbench.depgraph import code_deps, infrastructure_files, stage_module
    from stages.common.runtime.dvcfile import load_stages

    root = built_copy
    assert stale(root) == set()
    own = {"claimbench/params_check.py"}        # the params stage's own module: its dep
    for rel in infrastructure_files(root):
        if rel not in own:
            with open(root / rel, "a") as fh:
                fh.write("\n# an edit that cannot change any output\n")
    assert stale(root) == set(), "an infrastructure edit made stages stale"

    stages = load_stages(root)
    users = {n for n, s in stages.items() if stage_module(s.cmd)
             and "stages/common/fits.py" in code_deps(root, stage_module(s.cmd))}
    assert len(users) >= 3, users          # the studies that read a rate off a sweep
    with open(root / "stages/common/fits.py", "a") as fh:
        fh.write("\n# an edit to an output-shaping module\n")
    assert stale(root) == users
