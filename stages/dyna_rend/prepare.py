"""dyna_rend prepare: the voxel scenes, generated from the seed.

Splits: ``pretrain`` (unlabelled: scene, instruction, future scene), ``demos`` (labelled with the
place voxel), and test sets in distribution (``test_none``) and under each perturbation
(``test_distractors``, ``test_table``, ``test_lighting``). Views are rendered from the scenes where
they are used (exactly, by the same renderer), so only the voxel grids are stored.
Outputs: data/dyna_rend/scenes.npz and reports/dyna_rend/prepare.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, SCENES


def splits(p, seed: int) -> dict:
    """Every split's arrays (world.make_set), keyed ``<split>__<array>``."""
    import numpy as np

    from .world import PERTURBATIONS, Grid, make_set

    g = Grid(*p.grid)
    plan = [("pretrain", p.n_pretrain, "none"), ("demos", p.n_demos, "none")]
    plan += [(f"test_{q}", p.n_test, q) for q in PERTURBATIONS]
    out = {}
    for k, (name, n, pert) in enumerate(plan):
        sets = make_set(np.random.SeedSequence([seed, k]), n, g, p.n_blocks, p.stack_p, pert, p.lighting)
        out.update({f"{name}__{key}": v for key, v in sets.items()})
    return out


def main() -> None:
    with stage("dyna_rend", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        p = ctx.params.prepare
        data = splits(p, ctx.seed)
        write_npz(ctx.path(SCENES), data)
        occ = data["pretrain__occ"]
        stacked = float(np.mean(occ[..., 1:].any(axis=(1, 2, 3))))
        write_json(ctx.path(PREPARE_METRICS), {
            "n_pretrain": p.n_pretrain, "n_demos": p.n_demos, "n_test": p.n_test, "grid": p.grid,
            "blocks_per_scene": float(occ.sum(axis=(1, 2, 3)).mean()), "scenes_with_a_stack": stacked})
        print(f"  {p.n_pretrain} pre-training scenes, {p.n_demos} demos, {p.n_test} test scenes x 4 conditions; "
              f"{stacked:.0%} with a stack", flush=True)


if __name__ == "__main__":
    main()
