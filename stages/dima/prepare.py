"""dima prepare: behaviour trajectories in mpe2's simple_spread, seeded.

For the main experiment (``n_agents``) and the control (``control_agents``, where the chain has
one step): ``train_episodes`` and ``test_episodes`` of the behaviour policy (per agent and step a
random action with probability ``eps``, else head for its landmark), with disjoint env seeds.
A third run, ``rich``, has the main N and ``rich_episodes`` training episodes (the data-rich control).
Outputs: data/dima/transitions.npz (arrays ``<run>_<split>_<field>``, run main/control/rich, split
train/test, fields s a r s2 ep t) and reports/dima/prepare.json (sizes, behaviour returns).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATA, PREPARE_METRICS


def runs(p) -> list[tuple[str, int, int]]:
    """(run, agents, training episodes): the main run, the one-agent control, the data-rich control."""
    return [("main", p.n_agents, p.train_episodes), ("control", p.control_agents, p.train_episodes),
            ("rich", p.n_agents, p.rich_episodes)]


def main() -> None:
    with stage("dima", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from .env import collect

        p = ctx.params.prepare
        arrays, info = {}, {}
        for run, n, n_train in runs(p):
            for split, eps_count, off in (("train", n_train, 0), ("test", p.test_episodes, 1)):
                # the rich control shares the main run's held-out episodes (same N, same seeds)
                d = collect(n, p.max_cycles, eps_count, seed=ctx.seed * 1000 + 10 * n + off, eps=p.eps, progress=True)
                for k, v in d.items():
                    arrays[f"{run}_{split}_{k}"] = v
                ret = np.bincount(d["ep"], weights=d["r"])
                info[f"{run}.{split}.transitions"] = int(len(d["r"]))
                info[f"{run}.{split}.behaviour_return_mean"] = float(ret.mean())
            info[f"{run}.n_agents"] = n
        write_npz(ctx.path(DATA), arrays)
        write_json(ctx.path(PREPARE_METRICS), info)
        print(f"  main N={p.n_agents}: {info['main.train.transitions']} train / {info['main.test.transitions']} "
              f"held-out transitions; behaviour return {info['main.test.behaviour_return_mean']:.2f}", flush=True)


if __name__ == "__main__":
    main()
