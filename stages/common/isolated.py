"""Call a function in spawned worker processes, for a library that cannot share a process.

OR-Tools 9.15 (CP-SAT, routing) bundles HiGHS 1.12 as ``libhighs.so.1``; highspy 1.15.1 (the
HiGHS that Pyomo's appsi solver uses in autoopt) ships its own ``libhighs.so.1``. The dynamic
loader keeps whichever was loaded first, and the other library then fails to import with an
undefined symbol. Stages are separate processes, but the test suite is one: so every OR-Tools
call runs through :func:`map_isolated`, in a fresh interpreter, and no stage or test process
imports OR-Tools itself. (scipy's own HiGHS, ``scipy.optimize.milp``, has no such clash.)

The function must be importable by name (a module-level function) and its module must not
import the library at the top: import it inside the function.
"""
from __future__ import annotations

import multiprocessing
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def map_isolated(fn: Callable[[T], R], items: Iterable[T], workers: int = 1) -> list[R]:
    """``[fn(x) for x in items]``, computed in ``workers`` spawned processes (in order)."""
    items = list(items)
    if workers < 1:
        raise ValueError(f"map_isolated: workers must be >= 1, got {workers}")
    if not items:
        return []
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(min(workers, len(items))) as pool:
        return pool.map(fn, items, chunksize=max(1, len(items) // (4 * workers)))
