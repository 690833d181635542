"""The MLflow client every part of the house opens, and the retry every call into the store goes through.

Below :mod:`.tracking` (a stage's run, the flow's runs) and :mod:`.registry` (models, experiment
tags), which both call into the store: :func:`client` makes an ``MlflowClient`` for the store
(``$MLFLOW_TRACKING_URI``, else ``mlruns.db`` at the repository root), creating a sqlite schema
under a file lock; :func:`retry` retries a busy store by exception type (tenacity), never a
create whose reply was lost; :func:`sigterm_deferred` holds a SIGTERM back while a call is in the
store.
"""
from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import Callable, TypeVar

from stages.common.runtime.params import repo_root

T = TypeVar("T")

def tracking_uri(root: Path | None = None) -> str:
    root = root or repo_root()
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{(root / 'mlruns.db').as_posix()}"


def is_server(uri: str) -> bool:
    return uri.startswith(("http://", "https://"))


def artifact_root(root: Path | None = None) -> str | None:
    """Where new experiments keep artifacts: ``$CLAIMBENCH_ARTIFACT_ROOT``, else ``mlartifacts/``
    beside the sqlite store; ``None`` (the server's choice) when logging to a tracking server."""
    root = root or repo_root()
    if os.environ.get("CLAIMBENCH_ARTIFACT_ROOT"):
        return os.environ["CLAIMBENCH_ARTIFACT_ROOT"]
    if is_server(tracking_uri(root)):
        return None
    return (root / "mlartifacts").as_uri()


@contextlib.contextmanager
def sigterm_deferred():
    """Hold a SIGTERM back until the block ends, then deliver it to the handler it would have
    met. Used around every call into the store (:func:`retry`) and around creating a run: a
    SIGTERM that landed after the run's row was written but before its id was known would
    leave a RUNNING run nobody could close.

    Done by swapping Python handlers, not by a signal mask: a masked process-wide signal is
    delivered to any other thread that does not mask it (MLflow's, torch's), and Python then
    runs the handler in the main thread at once. Where the current handler was not set from
    Python (``getsignal`` gives None) it cannot be put back, so nothing is deferred."""
    got: list[int] = []
    try:
        if signal.getsignal(signal.SIGTERM) is None:
            raise ValueError("a handler set outside Python")
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
    except ValueError:                     # not the main thread (signals do not come here), or the above
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if got:
            signal.raise_signal(signal.SIGTERM)


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and those it was raised from or during."""
    out: list[BaseException] = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def transient(exc: BaseException) -> bool:
    """A store error that passes: a busy or locked sqlite database (sqlite's or SQLAlchemy's
    OperationalError, which MLflow re-raises as TEMPORARILY_UNAVAILABLE; also a schema race while two processes
    migrate one store). Decided by type and MLflow's error code, not by message text."""
    import sqlite3

    import sqlalchemy.exc
    from mlflow.exceptions import MlflowException

    return any(isinstance(e, (sqlalchemy.exc.OperationalError, sqlite3.OperationalError)) or
               (isinstance(e, MlflowException) and e.error_code == "TEMPORARILY_UNAVAILABLE")
               for e in _chain(exc))


def conflict(exc: BaseException) -> bool:
    """Another process made the same named thing first (RESOURCE_ALREADY_EXISTS, or the
    database's unique constraint): worth a retry only for a get-or-create."""
    import sqlalchemy.exc
    from mlflow.exceptions import MlflowException

    return any(isinstance(e, sqlalchemy.exc.IntegrityError) or
               (isinstance(e, MlflowException) and e.error_code == "RESOURCE_ALREADY_EXISTS")
               for e in _chain(exc))


def retry(fn: Callable[[], T], attempts: int = 8, base: float = 0.25, get_or_create: bool = False) -> T:
    """Call ``fn`` (tenacity), retrying :func:`transient` store errors with jittered exponential
    waits, and, for a ``get_or_create``, a :func:`conflict` (the other process's object is there
    on the next try). Anything else is raised at once: a real integrity error, or a lost reply to
    a create, which a retry could turn into a duplicate. (Connection errors to a tracking server
    are retried by MLflow's own HTTP client.)

    A SIGTERM during the call waits until it returns (:func:`sigterm_deferred`): raised inside
    SQLAlchemy, mid-transaction, it left the store locked and the stage hung recording its
    failure."""
    from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

    def again(exc: BaseException) -> bool:
        return transient(exc) or (get_or_create and conflict(exc))

    for attempt in Retrying(retry=retry_if_exception(again), stop=stop_after_attempt(attempts),
                            wait=wait_random_exponential(multiplier=base, max=30), reraise=True):
        with attempt, sigterm_deferred():
            return fn()
    raise AssertionError("unreachable")


_READY_STORES: set[str] = set()


def client(root: Path | None = None):
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("DO_NOT_TRACK", "true")
    from mlflow.tracking import MlflowClient

    uri = tracking_uri(root)
    if not uri.startswith("sqlite:///") or uri in _READY_STORES:
        return MlflowClient(tracking_uri=uri)
    # MLflow creates and migrates a sqlite schema when a client is made; two processes doing
    # that at once leave it half-migrated ("table _alembic_tmp_params already exists",
    # mlflow #6490), which retrying cannot repair. So the first client of a store in each
    # process is made under a file lock beside the database: one process migrates, the
    # others then find the schema current.
    from filelock import FileLock

    db = Path(uri[len("sqlite:///"):])
    db.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(db) + ".init.lock", timeout=300):
        c = retry(lambda: MlflowClient(tracking_uri=uri))
    _READY_STORES.add(uri)
    return c
