"""Does the flow's priority slot scheduler (flows/slots.py: a free slot goes to the ready stage with
the longest chain ahead of it) earn its code over a plain concurrency cap (Prefect's global
concurrency limit: a free slot goes to whichever waiting stage asks first)?

    python benchmarks/pipeline/slot_priority.py [--slots 2 4] [--draws 200] [--jitter 0.3]

A simulation of the whole default DAG, every stage stale (the main job from scratch): each stage
takes the compute seconds the ledger last recorded for it (``stages/ledger/runs.json``, 1 s where
it has none), and a stage may start once its upstream stages are done and a slot is free. Three
ways to hand out a free slot:

* ``priority``: the longest estimated chain first (:func:`flows.plan.chain_seconds`, as the flow);
* ``arrival``: the stage that became ready first (ties in dependency order), a fair FIFO cap;
* ``random``: a ready stage at random, ``--draws`` times (what a polling cap amounts to when
  several stages wait), reported as mean and worst.

``--jitter s`` lets each stage's real time differ from the estimate the scheduler sees by a
log-normal factor (sigma ``s``), so the priority is judged on stale estimates, as in life; the
same draws serve every rule. Printed: each rule's makespan and its ratio to the critical path
and to the priority rule's. ``--smoke`` runs a few draws.
"""
from __future__ import annotations

import argparse
import heapq
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from flows.plan import chain_seconds, topological  # noqa: E402
from stages.common.runtime.dvcfile import load_stages, upstream  # noqa: E402


def makespan(order: list[str], edges: dict[str, set[str]], secs: dict[str, float], slots: int, pick) -> float:
    """Event simulation of ``slots`` stage processes; ``pick(ready)`` chooses the stage a free
    slot goes to among ``ready`` (a list in the order the stages became ready)."""
    waiting = {n: set(edges[n]) & set(order) for n in order}
    below: dict[str, list[str]] = {n: [] for n in order}
    for n in order:
        for u in waiting[n]:
            below[u].append(n)
    ready = [n for n in order if not waiting[n]]
    running: list[tuple[float, int, str]] = []
    now, started = 0.0, 0
    while ready or running:
        while ready and len(running) < slots:
            n = pick(ready)
            ready.remove(n)
            heapq.heappush(running, (now + secs[n], started, n))
            started += 1
        now, _, done = heapq.heappop(running)
        for d in below[done]:
            waiting[d].discard(done)
            if not waiting[d]:
                ready.append(d)
    return now


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--slots", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--draws", type=int, default=200, help="random orders (and jitter draws) per slot count")
    ap.add_argument("--jitter", type=float, default=0.3, help="sigma of the log-normal error of the estimates")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--smoke", action="store_true", help="a few draws (what CI runs)")
    a = ap.parse_args(argv)
    draws = 3 if a.smoke else a.draws
    if draws < 1 or a.jitter < 0 or min(a.slots) < 1:
        ap.error("--draws and --slots must be >= 1 and --jitter >= 0")

    stages = load_stages(REPO)
    edges = upstream(stages)
    order = topological(stages, edges)
    chain = chain_seconds(REPO, order, edges, a.profile)
    est = {n: chain[n] - max((chain[d] for d in order if n in edges[d]), default=0.0) for n in order}
    known = sum(1 for v in est.values() if v != 1.0)
    print(f"{len(order)} stages, {known} with a recorded compute time ({a.profile} profile), "
          f"{sum(est.values()):.0f} s of work, critical path {max(chain.values()):.0f} s")
    print(f"{draws} draws per slot count, estimate error: log-normal sigma {a.jitter}")

    for slots in a.slots:
        rng = random.Random(1000 + slots)
        res: dict[str, list[float]] = {"priority": [], "arrival": [], "random": []}
        for _ in range(draws):
            real = {n: s * rng.lognormvariate(0.0, a.jitter) for n, s in est.items()}
            res["priority"].append(makespan(order, edges, real, slots, lambda r: max(r, key=lambda n: chain[n])))
            res["arrival"].append(makespan(order, edges, real, slots, lambda r: r[0]))
            res["random"].append(makespan(order, edges, real, slots, rng.choice))
        lower = max(sum(est.values()) / slots, max(chain.values()))
        print(f"\n{slots} slots (lower bound with the estimates: {lower:.0f} s)")
        base = sum(res["priority"]) / draws
        for rule, xs in res.items():
            mean = sum(xs) / draws
            print(f"  {rule:<9} mean {mean:7.0f} s  worst {max(xs):7.0f} s  "
                  f"mean / priority's {mean / base:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
