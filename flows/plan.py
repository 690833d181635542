"""What a flow run runs, and in which order: the stale stages of the pipeline's dvc.yaml files
(DVC's own status) and everything downstream of them, ordered by their dependencies, with an
estimate of the work still ahead of each stage (who gets a free slot first) and how many
independent branches there are (how many threads each stage process gets)."""
from __future__ import annotations

import json
from graphlib import TopologicalSorter
from pathlib import Path

from stages.common.runtime.dvcfile import PARAMS_STAGE as CHECK_STAGE
from stages.common.runtime.dvcfile import load_stages, upstream

from .procs import api_target, dvc_api, study_of

# CHECK_STAGE: the stage that validates every study's params first (claimbench/params_check.py):
# upstream of every stage, it belongs to no study and logs no MLflow run


def topological(stages, edges: dict[str, set[str]]) -> list[str]:
    """The stages in an order where each comes after its upstream stages (graphlib), ties in the
    order they are listed."""
    return list(TopologicalSorter({n: sorted(edges[n]) for n in stages}).static_order())


def plan(root: Path, targets: list[str] | None = None, force: bool = False,
         stages: dict | None = None) -> tuple[list[str], set[str]]:
    """(stages that may need to run, in dependency order; those DVC reports changed now).

    A stage downstream of a changed one may turn out up to date once its upstream has run
    (the upstream made identical outputs); the flow asks DVC again before running it.
    ``force``: the targets (every stage, without targets) run even when up to date, as with
    ``dvc repro --force``; their upstream stages run only if stale. ``stages``: the pipeline's
    stages when the caller has loaded them already (:func:`load_stages`).
    """
    stages = stages if stages is not None else load_stages(root)
    edges = upstream(stages)
    if targets:
        unknown = sorted(set(targets) - set(stages))
        if unknown:
            raise ValueError(f"unknown stage(s) {unknown}; the pipeline has {sorted(stages)}")
    # DVC's status of the targets and what they depend on (every stage without targets)
    addresses = [api_target(root, stages[t].address) for t in targets or []]
    try:
        changed = set(dvc_api(lambda repo: repo.status(targets=addresses or None, with_deps=True), root))
    except Exception as exc:  # noqa: BLE001 - named as the flow's plan failing
        raise RuntimeError(f"dvc status failed: {type(exc).__name__}: {exc}") from exc
    changed = {c.split(":")[-1] for c in changed} & set(stages)
    if force:
        changed |= set(targets or stages)
    order = topological(stages, edges)
    stale: set[str] = set()
    for name in order:     # the params check's output is the same whenever it passes: it makes nothing stale
        if name in changed or (edges[name] - {CHECK_STAGE}) & stale:
            stale.add(name)
    if targets:
        wanted: set[str] = set()
        todo = list(targets)
        while todo:
            n = todo.pop()
            if n not in wanted:
                wanted.add(n)
                todo.extend(edges[n])
        stale &= wanted
    return [n for n in order if n in stale], changed


def flow_studies(todo: list[str]) -> list[str]:
    """The studies whose stages a flow run runs (their MLflow experiments)."""
    return sorted({study_of(n) for n in todo} - {CHECK_STAGE})


def branches(todo: list[str], edges: dict[str, set[str]]) -> int:
    """How many stages of ``todo`` can run at once, counted cheaply: its independent chains
    (connected groups of stages, leaving out the stages that join several studies, such as the
    ledger, which run after all of them anyway), plus one for each further member of a matrix
    stage (``<name>@<key>``: the shards of one stage run side by side)."""
    def studies_above(n: str, seen: set[str]) -> set[str]:
        out = {study_of(n)} - {CHECK_STAGE}
        for u in edges[n]:
            if u not in seen:
                seen.add(u)
                out |= studies_above(u, seen)
        return out

    import networkx as nx

    nodes = [n for n in todo if n != CHECK_STAGE and len(studies_above(n, set())) == 1]
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from((n, u) for n in nodes for u in edges[n] if u in graph)
    groups: dict[str, int] = {}
    for n in nodes:
        if "@" in n:
            groups[n.split("@")[0]] = groups.get(n.split("@")[0], 0) + 1
    return max(1, nx.number_connected_components(graph) + sum(k - 1 for k in groups.values()))


def chain_seconds(root: Path, todo: list[str], edges: dict[str, set[str]], profile: str | None) -> dict[str, float]:
    """For each stage to run, the estimated seconds of the longest chain from it to the end of
    ``todo`` (itself included): each stage's compute time as the ledger last recorded it for the
    profile (``stages/ledger/runs.json``), 1 s where it has none. The flow starts the stages with
    the longest chains first."""
    est: dict[str, float] = {}
    try:
        from stages.common.runtime.params import read_params_file

        prof = profile or read_params_file(root / "params.yaml")["common"]["profile"]
        studies = json.loads((root / "stages/ledger/runs.json").read_text()).get(prof, {}).get("studies", {})
        for study in studies.values():
            for name, run in study.get("stages", {}).items():
                if run.get("compute_s"):
                    est[name] = float(run["compute_s"])
    except (OSError, ValueError, KeyError, TypeError):
        pass                                       # no estimates: every stage counts 1 s
    below: dict[str, set[str]] = {n: set() for n in todo}
    for n in todo:
        for u in edges[n]:
            if u in below:
                below[u].add(n)
    out: dict[str, float] = {}
    for n in reversed(todo):                        # todo is in dependency order
        out[n] = est.get(n, 1.0) + max((out[d] for d in below[n]), default=0.0)
    return out
