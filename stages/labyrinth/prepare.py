"""labyrinth prepare: the mazes, for every verdict seed (``ctx.seeds``; a seed is one independent
repetition of the whole experiment: its own mazes, its own learners). Base study: train / eval /
test mazes of side ``n`` with pairwise distinct structures (canonical hash of the walls); each
variant (partial view, key and door, ice): its own train / test mazes of side ``variant_n``,
distinct likewise. Seed s draws its base mazes from ``rng(s, 0)`` and variant j's from
``rng(s, j)`` (stages.common.seeds.rng), so a seed's mazes depend on that seed alone.

Outputs: data/labyrinth/mazes.json ({seed: {variant: {split: [maze]}}}) and
reports/labyrinth/prepare.json (per seed: counts, the overlaps between splits (0 by construction,
checked here), mean optimal path length; ``per_seed`` beside their means over the seeds).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import MAZES, PREPARE_METRICS


def overlaps(splits: dict) -> int:
    """Structures shared by two different splits (0 when the splits are disjoint)."""
    names = list(splits)
    hashes = {k: {m.structure_hash() for m in splits[k]} for k in names}
    return sum(len(hashes[a] & hashes[b]) for i, a in enumerate(names) for b in names[i + 1:])


def build(p, seed: int) -> dict:
    """{variant: {split: [Maze]}} of one seed, for the base study and the three variants."""
    from stages.common.seeds import rng

    from .maze import make_splits

    out = {"base": make_splits(p.n, "base", {"train": p.n_train, "eval": p.n_eval, "test": p.n_test},
                               rng(seed, 0), p.loop_fraction)}
    for j, variant in enumerate(("partial", "key_door", "ice"), start=1):
        gen_variant = "base" if variant == "partial" else variant
        out[variant] = make_splits(p.variant_n, gen_variant, {"train": p.variant_train, "test": p.variant_test},
                                   rng(seed, j), p.loop_fraction)
    return out


def describe(mazes: dict) -> dict:
    """Per variant of one seed: split sizes, overlaps between splits, solvable share, mean optimal length."""
    import numpy as np

    from .maze import optimal_length

    metrics = {}
    for variant, splits in mazes.items():
        lengths = [optimal_length(m) for ms in splits.values() for m in ms]
        metrics[variant] = {"counts": {k: len(v) for k, v in splits.items()},
                            "split_overlap": overlaps(splits),
                            "solvable": float(np.mean([x > 0 for x in lengths])),
                            "mean_optimal_length": float(np.mean(lengths))}
    return metrics


def main() -> None:
    with stage("labyrinth", "prepare", PARAMS) as ctx:
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        p = ctx.params.prepare
        mazes = run_seeds(ctx.seeds, lambda s: build(p, s), what="mazes, seed")
        metrics = per_seed_metrics({s: describe(m) for s, m in mazes.items()})
        write_json(ctx.path(MAZES), {str(s): {v: {k: [m.to_dict() for m in ms] for k, ms in sp.items()}
                                              for v, sp in mz.items()} for s, mz in mazes.items()})
        write_json(ctx.path(PREPARE_METRICS), metrics)
        ctx.run.log_metrics({"base_split_overlap": metrics["base"]["split_overlap"],
                             "base_mean_optimal_length": metrics["base"]["mean_optimal_length"]})


if __name__ == "__main__":
    main()
