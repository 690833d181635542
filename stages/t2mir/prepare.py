"""t2mir prepare: the DarkRoom tasks (goal cells), split into training and held-out tasks by a seeded
permutation, and each task's offline in-context dataset (``pool`` random-policy transitions).

Outputs: data/t2mir/tasks.npz (``train_goals``, ``test_goals`` and the pools ``train_s``, ``train_a``,
``train_r``, ``train_s2``, ``test_*``) and reports/t2mir/prepare.json (task counts, the overlap of
the two goal sets, which must be 0, and the share of rewarded transitions in the pools).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, TASKS


def main() -> None:
    with stage("t2mir", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from .icl import make_pools, split_tasks

        p = ctx.params.prepare
        rng = np.random.default_rng([ctx.seed, 0])
        train_goals, test_goals = split_tasks(p.size, p.holdout, rng)
        arrays = {"size": np.array(p.size), "train_goals": train_goals, "test_goals": test_goals}
        for name, goals in (("train", train_goals), ("test", test_goals)):
            pools = make_pools(goals, p.size, p.pool, rng)
            arrays.update({f"{name}_{key}": v for key, v in pools.items()})
        write_npz(ctx.path(TASKS), arrays)
        overlap = len({tuple(g) for g in train_goals} & {tuple(g) for g in test_goals})
        write_json(ctx.path(PREPARE_METRICS), {
            "n_train_tasks": len(train_goals), "n_test_tasks": len(test_goals), "goal_overlap": overlap,
            "pool": p.pool, "reward_rate_train": float(arrays["train_r"].mean()),
            "reward_rate_test": float(arrays["test_r"].mean())})
        print(f"  {len(train_goals)} training / {len(test_goals)} held-out goals (overlap {overlap}), "
              f"{p.pool} transitions each", flush=True)


if __name__ == "__main__":
    main()
