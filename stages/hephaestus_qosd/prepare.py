"""hephaestus_qosd prepare: the QoSD graphs, generated from the seed with networkx (grid = road-like,
Erdos-Renyi, Waxman), each with s, t at maximum hop distance, T = tau * d(s, t) and per-edge cost
parameters (qosd.make_instance). Nothing is downloaded.

Outputs: data/hephaestus_qosd/instances.json (``train`` and ``test`` graphs and the cost kinds;
every graph is solved under every kind) and reports/hephaestus_qosd/prepare.json (sizes).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import INSTANCES, PREPARE_METRICS


def make_split(split: str, per_family: int, n_nodes: int, tau: float, rng) -> list:
    from .qosd import FAMILIES, make_instance

    return [make_instance(f"{split}-{fam}-{i}", fam, n_nodes, tau, rng) for i in range(per_family) for fam in FAMILIES]


def main() -> None:
    with stage("hephaestus_qosd", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json

        p = ctx.params.prepare
        rng = np.random.default_rng([ctx.seed, 22])
        splits = {name: make_split(name, k, p.n_nodes, p.tau, rng) for name, k in (("train", p.n_train), ("test", p.n_test))}
        write_json(ctx.path(INSTANCES), {"costs": p.costs, **{k: [g.to_dict() for g in v] for k, v in splits.items()}})
        test = splits["test"]
        write_json(ctx.path(PREPARE_METRICS), {
            "train_graphs": len(splits["train"]), "test_graphs": len(test), "costs": len(p.costs),
            "test_instances": len(test) * len(p.costs),
            "test_nodes_mean": float(np.mean([g.n for g in test])), "test_edges_mean": float(np.mean([g.m for g in test])),
            "test_nodes_max": int(max(g.n for g in test))})


if __name__ == "__main__":
    main()
