"""A pool of forked workers for a stage that shares its arrays with them without pickling.

A stage runs with a SIGTERM handler that raises ``SystemExit`` (:mod:`stages.common.runtime.stage`:
a killed stage unwinds and cleans up). A forked worker inherits that handler, and a Python handler
only runs in the main thread. ``Pool``'s exit ends its workers with SIGTERM; where the signal lands
on another thread of a worker (torch starts one to share tensors with the parent), the worker's main
thread, blocked on the task queue's lock, never sees it, and the pool waits forever for that worker
(seen: autoopt-m1-train, 2026-12-07). :func:`fork_pool`'s workers first give SIGTERM back its
default action, so terminating them ends them whatever thread the signal lands on.
"""
from __future__ import annotations


def default_sigterm() -> None:
    """Pool initializer: SIGTERM ends this process (the default action), not a Python handler."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def fork_pool(processes: int):
    """``multiprocessing.Pool(processes)`` of forked workers whose SIGTERM is the default action."""
    import multiprocessing

    if processes < 1:
        raise ValueError(f"fork_pool: processes must be >= 1, got {processes}")
    return multiprocessing.get_context("fork").Pool(processes, initializer=default_sigterm)
