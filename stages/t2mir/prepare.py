"""t2mir prepare: for every verdict seed (``ctx.seeds``), the DarkRoom tasks (goal cells) split
into training and held-out tasks by a seeded permutation, and each task's offline in-context
dataset (``pool`` random-policy transitions). A seed is one independent repetition of the whole
experiment: it draws the split, the datasets, the initialisation and the batches.

Outputs: data/t2mir/tasks.npz (per seed, keys ``s<seed>/train_goals``, ``s<seed>/test_goals`` and the
pools ``s<seed>/train_s`` ... ``s<seed>/test_s2``) and reports/t2mir/prepare.json (per seed: task
counts, the overlap of the two goal sets, which is 0 by construction (a test checks it), and the
share of rewarded transitions in the pools).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, TASKS


def main() -> None:
    with stage("t2mir", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .run import prepare_seed

        p = ctx.params.prepare
        arrays: dict = {}

        def one(seed: int) -> dict:
            a = prepare_seed(p.size, p.holdout, p.pool, seed)
            arrays.update({f"s{seed}/{key}": v for key, v in a.items()})
            overlap = len({tuple(g) for g in a["train_goals"]} & {tuple(g) for g in a["test_goals"]})
            return {"n_train_tasks": len(a["train_goals"]), "n_test_tasks": len(a["test_goals"]),
                    "goal_overlap": overlap, "reward_rate_train": float(a["train_r"].mean()),
                    "reward_rate_test": float(a["test_r"].mean())}

        results = run_seeds(ctx.seeds, one, what="t2mir prepare seed")
        arrays["seeds"] = np.array(ctx.seeds)
        write_npz(ctx.path(TASKS), arrays)
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(results, pool=p.pool))
        r = results[ctx.seeds[0]]
        print(f"  {r['n_train_tasks']} training / {r['n_test_tasks']} held-out goals a seed, "
              f"{p.pool} transitions each, {len(ctx.seeds)} seeds", flush=True)


if __name__ == "__main__":
    main()
