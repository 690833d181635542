"""Helpers the tests share (plain functions and constants; the shared fixtures are in
tests/conftest.py): an offline environment, a params error's message, a code copy of the checkout,
a stage run as a subprocess and what it must say when it stops."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
PYTHON = str(Path(sys.executable))
OFFLINE_ENV = {
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "true",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "DVC_NO_ANALYTICS": "1",
}


def isolate_env(mp: pytest.MonkeyPatch, base) -> None:
    """Offline, telemetry-free env with the MLflow store and artifacts inside ``base``."""
    for k, v in OFFLINE_ENV.items():
        mp.setenv(k, v)
    mp.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{(base / 'mlflow.db').as_posix()}")
    mp.setenv("CLAIMBENCH_ARTIFACT_ROOT", (base / "artifacts").as_uri())
    mp.delenv("DVC_ROOT", raising=False)
    mp.delenv("CLAIMBENCH_PARENT_RUN_ID", raising=False)


def params_error(study: str, model, data: dict, profile: str | None = None) -> str:
    """The message of the ParamsError that loading ``study`` from ``data`` raises (fails if none)."""
    from stages.common.runtime.params import ParamsError, load_study

    with pytest.raises(ParamsError) as info:
        load_study(study, model, data, profile=profile)
    return str(info.value)


def subprocess_env(**extra: str) -> dict:
    """A subprocess env: os.environ without DVC_ROOT / MLflow store vars, offline, plus extras."""
    drop = {"DVC_ROOT", "MLFLOW_TRACKING_URI", "CLAIMBENCH_ARTIFACT_ROOT", "CLAIMBENCH_PARENT_RUN_ID"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(OFFLINE_ENV)
    env.update(extra)
    return env


def run_chain(root: Path, env: dict, python_exe: str, chain, study: str, reports) -> dict:
    """Run each entry of ``chain`` (a module, or a tuple of module and arguments) as
    ``python -m`` in ``root``; return the study's reports/<study>/<name>.json for ``reports``."""
    import json

    for entry in chain:
        args = (entry,) if isinstance(entry, str) else tuple(entry)
        res = subprocess.run([python_exe, "-m", *args], cwd=root, env=env, capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, f"{args}: {res.stderr[-3000:]}"
    return {name: json.loads((root / f"reports/{study}/{name}.json").read_text()) for name in reports}


def set_params(root: Path, values: dict[str, object]) -> None:
    """Set values by dotted key in the params files under ``root``: ``common.*`` in params.yaml,
    ``<study>.*`` in the study's own file, e.g. ``{"nac_b.default.prepare.rvi_tau": 1.5}``."""
    from stages.common.runtime.params import params_file, read_params_file, write_params_file

    for dotted, value in values.items():
        *parents, key = dotted.split(".")
        path = root / "params.yaml" if parents[0] == "common" else params_file(parents[0], root)
        data = read_params_file(path)
        node = data
        for name in parents:
            node = node[name]
        node[key] = value
        write_params_file(path, data)


def code_copy(tmp_path: Path, params: dict[str, object] | None = None) -> Path:
    """params.yaml, dvc.yaml and stages/ (with the studies' params files) copied into ``tmp_path``
    (no data, no git, no dvc.lock: a stage run by hand, so its own input checks speak): enough
    for a stage that must stop on bad params or missing inputs before any compute. ``params`` sets values in the copy by dotted key (:func:`set_params`)."""
    import shutil

    for f in ("params.yaml", "dvc.yaml"):
        shutil.copy(REPO / f, tmp_path / f)
    shutil.copytree(REPO / "stages", tmp_path / "stages", ignore=shutil.ignore_patterns("__pycache__", "dvc.lock"))
    if params:
        set_params(tmp_path, params)
    return tmp_path


def run_module(root: Path, module: str, env: dict, python_exe: str, timeout: int = 120):
    """``python -m module`` in ``root`` (``module`` may carry arguments: ``"pkg.mod --shard 0"``);
    the CompletedProcess (text output captured)."""
    return subprocess.run([python_exe, "-m", *module.split()], cwd=root, env=env, capture_output=True,
                          text=True, timeout=timeout)


def stops_before_compute(tmp_path: Path, module: str, params: dict[str, object], env: dict,
                         python_exe: str) -> str:
    """Run ``module`` in a code copy with ``params`` set (:func:`code_copy`): it must exit 2 before
    any compute, writing no data/ and no reports/. Returns its stderr for the caller's checks of
    the message (the key, the value, what is allowed)."""
    code_copy(tmp_path, params=params)
    res = run_module(tmp_path, module, env, python_exe)
    assert res.returncode == 2, res.stderr
    assert not (tmp_path / "data").exists() and not (tmp_path / "reports").exists()
    return res.stderr


def stops_without_input(tmp_path: Path, module: str, hint: str, env: dict, python_exe: str) -> str:
    """Run ``module`` in a code copy with no data: it must exit 2, without a traceback, with a
    message that contains ``hint`` (the stage to run first). Returns its stderr."""
    code_copy(tmp_path)
    res = run_module(tmp_path, module, env, python_exe)
    assert res.returncode == 2, res.stderr
    assert hint in res.stderr and "Traceback" not in res.stderr, res.stderr
    return res.stderr


def calls(tree) -> list:
    """``(name, node)`` for every call in an ``ast`` tree: ``f(...)`` and ``x.f(...)`` are both named ``f``."""
    import ast

    return [(getattr(n.func, "attr", getattr(n.func, "id", None)), n) for n in ast.walk(tree) if isinstance(n, ast.Call)]


def require_sandbox() -> None:
    """Skip (fail under CI=true, where .ci/run installs it) when bubblewrap cannot run here."""
    from stages.common.sandbox import available

    why = available()
    if why is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


def assert_claims_read_every_seed(study: str, metrics: dict, seeds: list[int]) -> None:
    """Every claim of ``study`` not retired is judged on ``seeds`` (none `not run`), and its
    metric, baseline, control and context are in each seed's figures of ``metrics``."""
    from stages.common.claims import evaluate, load_claims

    def has(tree, dotted: str) -> bool:
        for k in dotted.split("."):
            if not isinstance(tree, dict) or k not in tree:
                return False
            tree = tree[k]
        return True

    cf = load_claims(REPO / f"stages/{study}/claims.yaml")
    rows = {r["id"]: r for r in evaluate(cf, metrics, seeds)}
    for c in cf.claims:
        if c.retired:
            assert rows[c.id]["verdict"] == "retired"
            continue
        assert rows[c.id]["n"] == len(seeds) and rows[c.id]["verdict"] != "not run", c.id
        for key in [c.metric, c.baseline, c.control, *c.context]:
            if key:
                assert all(has(metrics["per_seed"][str(s)], key) for s in seeds), (c.id, key)


def bit_exact_batching(test):
    """For a test that a batch of seeds (or fits) computes each one bit for bit as alone. That holds
    where the BLAS gives a row the same bits whatever the batch around it: MKL's default code path
    does so on the machines these tests were written on, but not on every CPU (on an AMD EPYC with
    AVX-512, 2026-12-07, cdc_gs's fits and diff_purify's models drift apart in the last bits and
    then further). When the test fails, it is run once more in a fresh interpreter under MKL's
    conditional numerical reproducibility (``MKL_CBWR=COMPATIBLE``, one code path on every CPU,
    1.9-3x slower GEMMs, so the stages do not run under it): if it passes there, the batching
    logic is right and this machine's BLAS is the difference, and the test is skipped saying so;
    if it fails there too, the failure stands."""
    import functools

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        try:
            return test(*args, **kwargs)
        except AssertionError as err:
            if os.environ.get("MKL_CBWR"):
                raise
            nodeid = os.environ["PYTEST_CURRENT_TEST"].rsplit(" ", 1)[0]
            again = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", nodeid],
                                   cwd=REPO, env={**os.environ, "MKL_CBWR": "COMPATIBLE"},
                                   capture_output=True, text=True, timeout=600)
            if again.returncode != 0:
                raise
            first = next((ln.strip() for ln in str(err).splitlines() if ln.strip()), "assertion")[:200]
            pytest.skip(f"not bit-exact with this CPU's default MKL code path ({first}); bit-exact under "
                        f"MKL_CBWR=COMPATIBLE, so the batching is right (tests/helpers.bit_exact_batching)")
    return wrapper
