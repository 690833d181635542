"""The MLflow UI as a researcher opens it: `mlflow ui` (what `claimbench ui` runs) on 127.0.0.1
over the store of a Prefect flow run on the small target (zipf_bigram and the ledger), in a real
headless Chromium. It lists the experiments; our link opens a study's experiment on its runs,
with the stage runs nested under the flow's run; the ``claims`` saved view shows the claim
metrics, profile, stage and compute-time columns; nothing leaves the machine and the console
holds no error but MLflow's own (listed in BENIGN)."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.builds import REPO, sh

# Console errors of MLflow's own making, harmless here:
BENIGN = (
    # the UI asks for the signed-in user; `mlflow ui` without an auth app has no such endpoint,
    # and the UI goes on without one
    "/ajax-api/2.0/mlflow/users/current - Failed to load resource: the server responded with a status of 404",
    # the browser's note that a layout took a second pass (the runs grid, after a resize), which
    # the MLflow bundle logs as an error; the WHATWG spec calls it benign
    "ResizeObserver loop completed with undelivered notifications",
)


@pytest.fixture(scope="module")
def flow_store(tmp_path_factory) -> tuple[Path, str]:
    """A copy of the repository cut down to zipf_bigram and the ledger, after one flow run on the
    smoke profile: (its root, the flow's parent run id)."""
    from stages.common.runtime.checkout import copy_checkout

    root = copy_checkout(REPO, tmp_path_factory.mktemp("flow") / "repo", profile="smoke", only=["zipf_bigram"])
    proc = sh([sys.executable, "-m", "flows.pipeline", "--profile", "smoke"], root, timeout=900)
    result = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert result["failed"] == [], result
    return root, result["parent_run_id"]


@pytest.fixture(scope="module")
def ui(flow_store, tmp_path_factory):
    """`mlflow ui` on a free 127.0.0.1 port over that store (at most 120 s to answer); stopped,
    with its workers, when the module's tests are done. Yields its base URL."""
    import psutil

    from flows.stack import free_port, stop_trees, wait_http
    from claimbench.cli import ui_command, ui_env

    root, _ = flow_store
    port = free_port()
    log = tmp_path_factory.mktemp("ui") / "mlflow-ui.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(ui_command(root, "127.0.0.1", port), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, env=ui_env())
    try:
        t0 = time.perf_counter()
        wait_http(f"http://127.0.0.1:{port}/health", 120, proc, log)
        tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        rss = sum(p.memory_info().rss for p in tree) / 2**20
        print(f"mlflow ui answered in {time.perf_counter() - t0:.1f} s: {len(tree)} processes, {rss:.0f} MiB RSS")
        assert len(tree) <= 3, f"the UI runs {len(tree)} processes (MLflow's job runner should be off)"
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_trees([psutil.Process(proc.pid)])


def _wait(driver, predicate, what: str, timeout: float = 60):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.25).until(lambda d: predicate(d), message=what)


def _close_assistant(driver) -> None:
    """Close the MLflow Assistant panel the UI opens on a first visit (a quarter of the page)."""
    from selenium.webdriver.common.by import By

    for button in driver.find_elements(By.CSS_SELECTOR, "button[data-component-id='mlflow.assistant.chat_panel.close']"):
        button.click()


def _expand(driver, run_link: str) -> None:
    """Click the expand button in the row of the run whose link matches ``run_link``."""
    from selenium.webdriver.common.by import By

    cell = driver.find_element(By.CSS_SELECTOR, run_link).find_element(By.XPATH, "./ancestor::div[@col-id]")
    cell.find_element(By.CSS_SELECTOR, "button[data-component-id*='runnamecellrenderer']").click()


def _header_columns(driver) -> set[str]:
    """Every column id of the runs table: scrolled across, since the grid renders only the
    columns in view."""
    script = """
      const grid = document.querySelector('.ag-body-horizontal-scroll-viewport');
      const seen = new Set();
      const collect = () => document.querySelectorAll('.ag-header-cell[col-id]').forEach(
          h => seen.add(h.getAttribute('col-id')));
      const done = arguments[arguments.length - 1];
      let x = 0;
      const step = () => {
        collect();
        if (!grid || x >= grid.scrollWidth) { if (grid) grid.scrollLeft = 0; done([...seen]); return; }
        x += 300; grid.scrollLeft = x; grid.dispatchEvent(new Event('scroll'));
        setTimeout(step, 150);
      };
      step();
    """
    return set(driver.execute_async_script(script))


def test_mlflow_ui_opens_study_runs_nested_under_the_flow(flow_store, ui, browser):
    import yaml
    from mlflow.tracking import MlflowClient
    from selenium.webdriver.common.by import By

    from stages.common.runtime.registry import runs_url

    root, parent_id = flow_store
    c = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns.db'}")
    exp = c.get_experiment_by_name("zipf_bigram")
    (study_parent,) = c.search_runs([exp.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{parent_id}'")
    stage_runs = c.search_runs([exp.experiment_id],
                               filter_string=f"tags.mlflow.parentRunId = '{study_parent.info.run_id}'")
    assert sorted(r.info.run_name for r in stage_runs) == ["evaluate", "prepare", "train"]
    d = browser.driver
    d.set_script_timeout(60)

    from claimbench.cli import ui_landing      # where `claimbench ui [study]` points the browser

    # 1. `claimbench ui`'s landing: the experiments, every study's, the ledger's and the flows' (not
    #    MLflow's GenAI home page, "Welcome to MLflow")
    browser.open(ui_landing(root, ui, None))
    _wait(d, lambda d: all(n in d.find_element(By.TAG_NAME, "body").text for n in ("zipf_bigram", "ledger", "pipeline")),
          "the experiment list names zipf_bigram, ledger and pipeline")
    assert "Welcome to MLflow" not in d.find_element(By.TAG_NAME, "body").text
    shot_list = browser.screenshot("mlflow_experiments")

    # 2. our link opens the study's experiment on its runs (not the GenAI overview); the flow's run
    #    is a row, its stage runs appear under it once it is expanded
    browser.open(runs_url(ui, exp.experiment_id, view=False))
    link = f"a[href$='/runs/{study_parent.info.run_id}']"
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, link), "the flow's run is a row of the runs table")
    assert "/runs" in d.current_url and "/overview" not in d.current_url, d.current_url
    _close_assistant(d)
    kids = [f"a[href$='/runs/{r.info.run_id}']" for r in stage_runs]
    assert not any(d.find_elements(By.CSS_SELECTOR, k) for k in kids), "stage runs shown before expanding"
    _expand(d, link)
    _wait(d, lambda d: all(d.find_elements(By.CSS_SELECTOR, k) for k in kids),
          "the three stage runs appear under the flow's run when it is expanded")
    shot_runs = browser.screenshot("mlflow_runs_nested")

    # 3. the `claims` saved view: profile, stage, compute time and every claim metric as columns
    d.set_window_size(2400, 1000)
    from claimbench.cli import experiment_links   # the links `claimbench ui` prints

    claims_link = dict(experiment_links(root, ui))["zipf_bigram"]
    assert claims_link == runs_url(ui, exp.experiment_id) == ui_landing(root, ui, "zipf_bigram")
    browser.open(claims_link)
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, link), "the runs table under the claims view")
    _close_assistant(d)
    if not d.find_elements(By.CSS_SELECTOR, kids[0]):
        _expand(d, link)
    _wait(d, lambda d: all(d.find_elements(By.CSS_SELECTOR, k) for k in kids), "the stage runs, expanded")
    claims = yaml.safe_load((root / "stages/zipf_bigram/claims.yaml").read_text())["claims"]
    wanted = {"tags.`profile`", "tags.`dvc.stage`", "metrics.`stage.compute_s`",
              *(f"metrics.`{cl['metric']}`" for cl in claims)}
    _wait(d, lambda d: wanted <= _header_columns(d), f"the claims view shows the columns {sorted(wanted)}")
    shot_view = browser.screenshot("mlflow_claims_view")

    errors = [e for e in browser.console_errors() if not any(b in e for b in BENIGN)]
    assert errors == [], errors
    assert browser.external_requests() == []
    for shot in (shot_list, shot_runs, shot_view):
        assert shot.stat().st_size > 10_000
        print(f"screenshot: {shot}")
