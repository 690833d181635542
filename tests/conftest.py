"""Test-wide settings and the test tiers.

Offline switches, and every store (MLflow, Prefect, HF) in a temp folder.

Tiers (a marker each; a test without one is ``unit``), run in this order so each is timed as
one block, and summed up at the end of the run (``tier`` table):

``unit``       maths, params, helpers, single stages on tiny inputs: no pipeline.
``study``      a study's smoke chain: its outputs in the session's one smoke build, and its
               determinism (its stages run once more in a copy of the build, same outs).
``pipeline``   DVC on the whole built DAG: no-op, what re-runs after an edit, bad params, a killed
               or hand-edited stage; each on a copy of the same build.
``machinery``  the Prefect flow, Dask, the stack, failure safety, concurrent logging, on a small
               target (zipf_bigram and the ledger), never the whole DAG.
``browser``    pages opened in a real headless Chromium (``tests/browser/``, every test there;
               harness in ``tests/browser/conftest.py``): the ledger page, plots, the MLflow UI.

``python -m pytest -m unit`` is the quick loop (a few minutes); the whole suite builds the smoke
DAG once (``smoke_built``).
"""
from __future__ import annotations

import copy
import os
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import pytest

from tests.helpers import PYTHON, isolate_env, subprocess_env

OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "true",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DVC_NO_ANALYTICS": "1",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
}
TIERS = ("unit", "study", "pipeline", "machinery", "benchmark", "browser")
BROWSER_DIR = Path(__file__).resolve().parent / "browser"
REPO = Path(__file__).resolve().parents[1]


def isolated_env(base: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` with the offline switches, Prefect's and HF's homes under ``base`` and no
    inherited tracking or DVC variables: what every test and the smoke build run in."""
    env = {**env, **OFFLINE, "PREFECT_HOME": str(base / "prefect"), "HF_HOME": str(base / "hf"),
           "CLAIMBENCH_AGENT_IDLE_S": "20"}       # the tests' tracking agents leave soon
    for var in ("MLFLOW_TRACKING_URI", "MLFLOW_RUN_ID", "DVC_ROOT", "CLAIMBENCH_TRACKING",
                "CLAIMBENCH_ARTIFACT_ROOT", "CLAIMBENCH_PARENT_RUN_ID"):
        env.pop(var, None)
    return env


def _stores_base(config) -> Path:
    return config._tmp_path_factory.getbasetemp() / "stores0"


@pytest.fixture(autouse=True, scope="session")
def _offline_and_isolated(request):
    base = _stores_base(request.config)
    base.mkdir(parents=True, exist_ok=True)
    saved = dict(os.environ)
    env = isolated_env(base, saved)
    os.environ.clear()
    os.environ.update(env)
    yield
    os.environ.clear()
    os.environ.update(saved)


# -- tiers --------------------------------------------------------------------------------
def tier_of(item) -> str:
    for name in TIERS[1:]:
        if item.get_closest_marker(name):
            return name
    return "unit"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if BROWSER_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
        if tier_of(item) == "unit":
            item.add_marker(pytest.mark.unit)
    items.sort(key=lambda it: TIERS.index(tier_of(it)))       # stable: file order within a tier


_WALL: dict[str, float] = defaultdict(float)
_COUNT: dict[str, int] = defaultdict(int)
_STUDY: dict[str, float] = defaultdict(float)
_BUILD: dict = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    t0 = time.perf_counter()
    yield
    dt = time.perf_counter() - t0
    tier = tier_of(item)
    _WALL[tier] += dt
    _COUNT[tier] += 1
    parts = Path(str(item.fspath)).relative_to(REPO).parts
    if len(parts) > 2 and parts[0] == "tests":
        _STUDY[parts[1]] += dt


def pytest_terminal_summary(terminalreporter):
    if not _WALL:
        return
    w = terminalreporter.write_line
    w("")
    w("tier        tests   wall (s)")
    for tier in TIERS:
        if _COUNT[tier]:
            w(f"{tier:10s} {_COUNT[tier]:6d} {_WALL[tier]:10.1f}")
    w(f"{'all':10s} {sum(_COUNT.values()):6d} {sum(_WALL.values()):10.1f}")
    if "wall" in _BUILD and "waited" in _BUILD:
        w(f"the smoke build (dvc repro, whole DAG, smoke profile, once) took {_BUILD['wall']:.1f} s in the "
          f"background from the session's start; the first test that needed it waited {_BUILD['waited']:.1f} s "
          f"(in its tier)")
    elif "wall" in _BUILD:
        w(f"of which the smoke build (dvc repro, whole DAG, smoke profile, once): {_BUILD['wall']:.1f} s "
          f"(in the tier of the first test that needed it)")
    w("by test folder (s): " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(_STUDY.items(), key=lambda kv: -kv[1])))
    if "root" in _BUILD:
        per = build_seconds_by_study(_BUILD["root"])
        w("smoke build, by study (s, its stages' processes as MLflow timed them): " +
          ", ".join(f"{k} {v:.0f}" for k, v in sorted(per.items(), key=lambda kv: -kv[1])))


def build_seconds_by_study(root: Path) -> dict[str, float]:
    """Seconds of the smoke build's stage runs, summed by study (from the build's MLflow store)."""
    try:
        from mlflow.tracking import MlflowClient

        c = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns.db'}")
        out: dict[str, float] = defaultdict(float)
        for e in c.search_experiments():
            for r in c.search_runs([e.experiment_id], max_results=1000):
                if "dvc.stage" in r.data.tags and r.info.end_time:
                    out[r.data.tags["dvc.stage"].split("-")[0]] += (r.info.end_time - r.info.start_time) / 1000
        return dict(out)
    except Exception as exc:  # noqa: BLE001 - a summary line, never a failure
        return {f"(unavailable: {type(exc).__name__})": 0.0}


# -- the one smoke build, and copies of it ------------------------------------------------
def pytest_collection_finish(session):
    """When a collected test needs the smoke build, start it now, in the background: its
    ``dvc repro`` runs stages one at a time (one core), so it overlaps the unit tier, which runs
    first on the other core, instead of following it. ``smoke_built`` waits for it."""
    import threading

    if session.config.option.collectonly or not any(
            "smoke_built" in getattr(item, "fixturenames", ()) for item in session.items):
        return
    from tests.builds import smoke_build

    config = session.config
    dst = config._tmp_path_factory.mktemp("built") / "repo"
    base = _stores_base(config)
    base.mkdir(parents=True, exist_ok=True)
    env = isolated_env(base, dict(os.environ))
    _BUILD["env"] = env                           # the study tier's re-runs run in it too (Reruns)

    def build():
        try:
            _BUILD["result"] = smoke_build(dst, env=env)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the fixture, in the test that waits
            _BUILD["error"] = exc

    _BUILD["started"] = time.perf_counter()
    _BUILD["thread"] = threading.Thread(target=build, name="smoke-build", daemon=True)
    _BUILD["thread"].start()


@pytest.fixture(scope="session")
def smoke_built(tmp_path_factory) -> tuple[Path, str]:
    """One ``dvc repro`` of the whole DAG on the smoke profile in a fresh copy: (its root, its
    output). Tests must not change it: they get copies (``built_copy``, ``rerun_study``). Started
    in the background when the session began (``pytest_collection_finish``), awaited here."""
    from tests.builds import smoke_build

    if "thread" in _BUILD:
        t0 = time.perf_counter()
        _BUILD["thread"].join()
        _BUILD["waited"] = time.perf_counter() - t0
        if "error" in _BUILD:
            raise _BUILD["error"]
        root, out, wall = _BUILD["result"]
    else:
        root, out, wall = smoke_build(tmp_path_factory.mktemp("built") / "repo")
    _BUILD.update(wall=wall, root=root)
    print(f"\nsmoke build: {wall:.1f} s")
    return root, out


@pytest.fixture
def built_copy(smoke_built, tmp_path) -> Path:
    """A copy of the built smoke repo (outputs, dvc.lock, DVC cache, MLflow store with its runs)."""
    from tests.builds import copy_built

    return copy_built(smoke_built[0], tmp_path / "repo")


@pytest.fixture(scope="session")
def _reruns(smoke_built, tmp_path_factory, request):
    """The study tier's re-runs, two at a time (:class:`tests.builds.Reruns`), queued for every
    study whose tests in this session use ``rerun_study`` (its folder under tests/), in test order."""
    from tests.builds import Reruns

    reruns = Reruns(smoke_built[0], tmp_path_factory.mktemp("rerun"), workers=2, env=_BUILD.get("env"))
    studies = []
    for item in request.session.items:
        parts = Path(str(item.fspath)).relative_to(REPO).parts
        if "rerun_study" in getattr(item, "fixturenames", ()) and len(parts) > 2 and parts[1] not in studies:
            studies.append(parts[1])
    reruns.start(studies)
    yield reruns
    reruns.close()


@pytest.fixture
def rerun_study(smoke_built, _reruns):
    """``rerun_study(study, volatile=())``: the study's stages once more in a copy of the build
    (queued at the tier's start, two studies at a time); asserts every out is as the build made it
    and returns the build's reports/<study>/*.json (see :func:`tests.builds.compare_study`), with
    the build's root under ``"root"``."""
    from tests.builds import compare_study

    def run(study: str, volatile: tuple[str, ...] = ()) -> dict:
        return {**compare_study(smoke_built[0], _reruns.root(study), study, volatile), "root": smoke_built[0]}

    return run


# ---- fixtures every test folder shares (helpers: tests/helpers.py) ----
@pytest.fixture(scope="session")
def real_params() -> dict:
    """The repository's params, parsed (never written): ``common`` and every study's section, as
    one mapping ``{"common": ..., "<study>": ...}``."""
    from stages.common.runtime.params import read_params

    return read_params(REPO)


@pytest.fixture
def params_copy(real_params) -> dict:
    """A deep copy of params.yaml that a test may corrupt in memory."""
    return copy.deepcopy(real_params)


@pytest.fixture
def offline_env(monkeypatch, tmp_path):
    """Offline, telemetry-free env with an MLflow store inside tmp_path."""
    isolate_env(monkeypatch, tmp_path)
    return tmp_path


@pytest.fixture
def sub_env():
    """Build a subprocess env (see subprocess_env)."""
    return subprocess_env


@pytest.fixture
def stage_env():
    """Environment for running a study's stage as a subprocess: offline, MLflow off, one thread."""
    return subprocess_env(CLAIMBENCH_TRACKING="off", OMP_NUM_THREADS="1")


@pytest.fixture
def git_cmd():
    """Run git in a folder with a throwaway identity; returns stdout."""
    def run(root: Path, *args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
            cwd=root, check=True, capture_output=True, text=True).stdout.strip()
    return run


@pytest.fixture(scope="session")
def python_exe() -> str:
    return PYTHON
