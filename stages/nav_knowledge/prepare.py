"""nav_knowledge prepare: worlds, the agents' knowledge sets and their trajectories, per verdict seed.

A verdict seed is one independent repetition of the whole experiment. For every seed of the
profile (``ctx.seeds``) and each of ``agents`` agents: a ``grid x grid`` world with ``n_walls``
wall segments, a knowledge set (each segment known w.p. ``p_known``) and ``trajectories`` walks of
the noisy-rational, optimistic, replanning agent (stages/nav_knowledge/world.py) between random
start/goal pairs; the last ``held_out`` walks are held out. Generated locally (the paper's human
data are not used); a seed's agents depend on that seed alone.
Writes data/nav_knowledge/worlds.json (``seeds``: seed -> agents) and
reports/nav_knowledge/prepare.json (per seed: walk lengths, replans, known share).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import NavKnowledgeParams
from .paths import PREPARE_METRICS, WORLDS


def generate(p, seed: int) -> list[dict]:
    """The agents of one verdict seed (deterministic in ``seed``)."""
    import numpy as np

    from .world import make_world, pick_start_goal, simulate

    rng = np.random.default_rng([seed, 4001])
    agents = []
    for a in range(p.agents):
        w = make_world(rng, p.grid, p.grid, p.n_walls, tuple(p.wall_len))
        known = rng.random(w.n_walls) < p.p_known
        paths, reached, replans = [], [], []
        for _ in range(p.trajectories):
            s, g = pick_start_goal(rng, w, p.min_dist)
            out = simulate(w, known, s, g, p.beta, rng, p.max_steps)
            paths.append(out["path"])
            reached.append(out["reached"])
            replans.append(len(out["replans"]))
        agents.append({"H": w.H, "W": w.W, "cell_wall": w.cell_wall.tolist(), "known": known.tolist(),
                       "paths": paths, "reached": reached, "replans": replans})
    return agents


def summary(agents: list[dict]) -> dict:
    """What prepare.json reports of one seed's agents."""
    import numpy as np

    lens = [len(x) - 1 for a in agents for x in a["paths"]]
    return {"agents": len(agents), "trajectories": len(lens), "steps_mean": float(np.mean(lens)),
            "reached_share": float(np.mean([r for a in agents for r in a["reached"]])),
            "replans_mean": float(np.mean([r for a in agents for r in a["replans"]])),
            "known_share": float(np.mean([k for a in agents for k in a["known"]]))}


def main() -> None:
    with stage("nav_knowledge", "prepare", NavKnowledgeParams) as ctx:
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        p = ctx.params.prepare
        worlds, per_seed = {}, {}
        for seed in ctx.seeds:
            worlds[str(seed)] = generate(p, seed)
            per_seed[seed] = summary(worlds[str(seed)])
            print(f"  seed {seed}: {per_seed[seed]}", flush=True)
        write_json(ctx.path(WORLDS), {"params": p.model_dump(), "seeds": worlds})
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(per_seed))


if __name__ == "__main__":
    main()
