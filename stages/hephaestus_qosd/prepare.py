"""hephaestus_qosd prepare: the QoSD graphs of every verdict seed, generated from the seed with
networkx (grid = road-like, Erdos-Renyi, Waxman), each with s, t at maximum hop distance,
T = tau * d(s, t) and per-edge cost parameters (qosd.make_instance). Nothing is downloaded.

A verdict seed is one independent repetition of the whole experiment: its own training and test
graphs (drawn here from ``rng(seed, 22)``), its own labels, Morph model and Refine draws (train,
evaluate). A seed's graphs depend on that seed alone.

Outputs: data/hephaestus_qosd/instances.json (``costs``, the prepare params, and ``seeds``: seed ->
``train`` and ``test`` graphs; every graph is solved under every cost kind) and
reports/hephaestus_qosd/prepare.json (sizes, per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import INSTANCES, PREPARE_METRICS


def make_split(split: str, per_family: int, n_nodes: int, tau: float, rng) -> list:
    from .qosd import FAMILIES, make_instance

    return [make_instance(f"{split}-{fam}-{i}", fam, n_nodes, tau, rng) for i in range(per_family) for fam in FAMILIES]


def seed_graphs(p, seed: int) -> dict[str, list]:
    """One verdict seed's ``train`` and ``test`` graphs (qosd.Instance, kind linear; every graph
    is solved under every cost kind), deterministic in ``seed``."""
    from stages.common.seeds import rng

    r = rng(seed, 22)
    return {name: make_split(name, k, p.n_nodes, p.tau, r) for name, k in (("train", p.n_train), ("test", p.n_test))}


def sizes(splits: dict[str, list], costs: list[str]) -> dict:
    """What prepare.json reports of one seed's graphs."""
    import numpy as np

    test = splits["test"]
    return {"train_graphs": len(splits["train"]), "test_graphs": len(test), "costs": len(costs),
            "test_instances": len(test) * len(costs),
            "test_nodes_mean": float(np.mean([g.n for g in test])), "test_edges_mean": float(np.mean([g.m for g in test])),
            "test_nodes_max": int(max(g.n for g in test))}


def main() -> None:
    with stage("hephaestus_qosd", "prepare", PARAMS) as ctx:
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        p = ctx.params.prepare
        graphs, figures = {}, {}
        for s in ctx.seeds:
            splits = seed_graphs(p, s)
            graphs[str(s)] = {k: [g.to_dict() for g in v] for k, v in splits.items()}
            figures[s] = sizes(splits, p.costs)
            print(f"  seed {s}: {figures[s]['train_graphs']} training and {figures[s]['test_graphs']} test graphs "
                  f"(mean {figures[s]['test_nodes_mean']:.1f} nodes, {figures[s]['test_edges_mean']:.1f} edges)", flush=True)
        write_json(ctx.path(INSTANCES), {"costs": p.costs, "params": p.model_dump(), "seeds": graphs})
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(figures))


if __name__ == "__main__":
    main()
