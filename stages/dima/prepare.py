"""dima prepare: behaviour trajectories in mpe2's simple_spread, for every verdict seed.

For each verdict seed (``ctx.seeds``), for the main experiment (``n_agents``) and the control
(``control_agents``, where the chain has one step): ``train_episodes``, ``val_episodes`` (early
stopping of every world model) and ``test_episodes`` (held-out) of the behaviour policy (per agent
and step a random action with probability ``eps``, else head for its landmark), with disjoint env
seeds drawn from the verdict seed. A third run, ``rich``, has the main N and ``rich_episodes``
training episodes (the data-rich control). Outputs: data/dima/transitions.npz (arrays
``s<seed>_<run>_<split>_<field>``, run main/control/rich, split train/val/test, fields s a r s2 ep t)
and reports/dima/prepare.json (sizes, behaviour returns; per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATA, PREPARE_METRICS, seed_key


def runs(p) -> list[tuple[str, int, int]]:
    """(run, agents, training episodes): the main run, the one-agent control, the data-rich control."""
    return [("main", p.n_agents, p.train_episodes), ("control", p.control_agents, p.train_episodes),
            ("rich", p.n_agents, p.rich_episodes)]


def collect_seed(p, seed: int, progress: bool = False) -> tuple[dict, dict]:
    """One verdict seed's behaviour data: ({``<run>_<split>_<field>``: array}, sizes and returns).
    Splits: train, val (early stopping of every model), test (held-out), each on its own env seeds."""
    import numpy as np

    from .env import collect

    arrays, info = {}, {}
    for run, n, n_train in runs(p):
        for split, eps_count, off in (("train", n_train, 0), ("test", p.test_episodes, 1), ("val", p.val_episodes, 2)):
            # the rich control shares the main run's held-out and validation episodes (same N, same seeds)
            d = collect(n, p.max_cycles, eps_count, seed=seed * 1000 + 10 * n + off, eps=p.eps, progress=progress)
            for k, v in d.items():
                arrays[f"{run}_{split}_{k}"] = v
            ret = np.bincount(d["ep"], weights=d["r"])
            info[f"{run}.{split}.transitions"] = int(len(d["r"]))
            info[f"{run}.{split}.behaviour_return_mean"] = float(ret.mean())
        info[f"{run}.n_agents"] = n
    return arrays, info


def main() -> None:
    with stage("dima", "prepare", PARAMS) as ctx:
        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .wm import nest

        p = ctx.params.prepare
        arrays: dict = {}

        def one(seed: int) -> dict:
            a, info = collect_seed(p, seed, progress=True)
            arrays.update({seed_key(seed, k): v for k, v in a.items()})
            return nest(info)

        per = run_seeds(ctx.seeds, one, what="dima prepare seed")
        write_npz(ctx.path(DATA), arrays)
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(per))
        s0 = per[ctx.seeds[0]]["main"]
        print(f"  main N={p.n_agents}: {s0['train']['transitions']} train / {s0['test']['transitions']} held-out / "
              f"{s0['val']['transitions']} validation transitions per seed, {len(ctx.seeds)} seeds", flush=True)


if __name__ == "__main__":
    main()
