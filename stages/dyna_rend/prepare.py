"""dyna_rend prepare: the voxel scenes of every verdict seed (a seed is one repetition of the whole
experiment: its own scenes, initialisation and batches).

Splits per seed: ``pretrain`` (unlabelled push videos: scene, "push A towards d", future scene),
``demos`` (stacking scenes labelled with the place voxel), test sets of the stacking task in
distribution (``test_none``) and under each perturbation (``test_distractors``, ``test_table``,
``test_lighting``), and ``test_push`` (held-out push scenes for the pretext figures). Views are
rendered from the scenes where they are used (exactly, by the same renderer), so only the voxel
grids are stored.
Outputs: data/dyna_rend/scenes.npz (keys ``s<seed>/<split>__<array>``) and
reports/dyna_rend/prepare.json (sizes; per seed, the share of scenes with a stack).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, SCENES


def splits(p, seed: int) -> dict:
    """Every split's arrays (world.make_set) of one seed, keyed ``<split>__<array>``."""
    import numpy as np

    from .world import PERTURBATIONS, Grid, make_set

    g = Grid(*p.grid)
    plan = [("pretrain", p.n_pretrain, "none", "push"), ("demos", p.n_demos, "none", "stack")]
    plan += [(f"test_{q}", p.n_test, q, "stack") for q in PERTURBATIONS]
    plan += [("test_push", p.n_test, "none", "push")]
    out = {}
    for k, (name, n, pert, task) in enumerate(plan):
        sets = make_set(np.random.SeedSequence([seed, k]), n, g, p.n_blocks, p.stack_p, pert, p.lighting, task)
        out.update({f"{name}__{key}": v for key, v in sets.items()})
    return out


def main() -> None:
    with stage("dyna_rend", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics

        p = ctx.params.prepare
        data, per_seed = {}, {}
        for seed in ctx.seeds:
            own = splits(p, seed)
            data.update({f"s{seed}/{k}": v for k, v in own.items()})
            occ = own["demos__occ"]
            per_seed[seed] = {"demos_with_a_stack": float(np.mean(occ[..., 1:].any(axis=(1, 2, 3)))),
                              "pretrain_with_a_stack": float(np.mean(own["pretrain__occ"][..., 1:].any(axis=(1, 2, 3))))}
            print(f"  seed {seed}: {p.n_pretrain} push videos, {p.n_demos} demos, {p.n_test} test scenes x 5 sets; "
                  f"{per_seed[seed]['pretrain_with_a_stack']:.0%} of the videos with a stack", flush=True)
        write_npz(ctx.path(SCENES), data)
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(
            per_seed, n_pretrain=p.n_pretrain, n_demos=p.n_demos, n_test=p.n_test, grid=p.grid))


if __name__ == "__main__":
    main()
