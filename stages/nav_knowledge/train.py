"""nav_knowledge train: posterior over which walls each agent knew, three ways, and predictions.

Per agent (world + knowledge set), on its training trajectories:
* plain SIS, SIS with resample-move, and Gibbs (stages/nav_knowledge/infer.py): P(known) per wall,
  ESS;
* behaviour relevance of every wall: |log p(train | K_true with the wall flipped) -
  log p(train | K_true)| (the evaluate stage thresholds it);
* held-out predictive NLL of each held-out trajectory under the SIS-RM posterior, the Gibbs
  states, the omniscient agent (knows every wall) and the ignorant one (knows none).
Writes data/nav_knowledge/posterior.npz (per-wall and per-trajectory arrays, agents
concatenated) and reports/nav_knowledge/train.json (deterministic summary).
"""
from __future__ import annotations

import json
import time

from stages.common.runtime.stage import fail, stage

from .params import NavKnowledgeParams
from .paths import POSTERIOR, TRAIN_METRICS, WORLDS
from .world import load_world


def infer_agent(agent: dict, pp, tp, rng) -> dict:
    """Everything train computes for one agent."""
    import numpy as np

    from .infer import Model, gibbs, predictive_nll, sis

    world = load_world(agent)
    n_train = len(agent["paths"]) - pp.held_out
    train, test = agent["paths"][:n_train], agent["paths"][n_train:]
    known = np.asarray(agent["known"], dtype=bool)
    model = Model(world, train, pp.beta)
    true = model.state(known)
    delta = np.array([model.flipped(true, w).ll.sum() - true.ll.sum() for w in range(world.n_walls)])
    t0 = time.process_time()
    plain = sis(model, rng, tp.particles, pp.p_known, resample_move=False)
    t1 = time.process_time()
    rm = sis(model, rng, tp.particles, pp.p_known, resample_move=True, ess_frac=tp.ess_frac, moves=tp.moves)
    t2 = time.process_time()
    gb = gibbs(model, rng, pp.p_known, tp.gibbs_sweeps, tp.gibbs_burn, tp.gibbs_keep_every)
    t3 = time.process_time()
    nw = world.n_walls
    gk = np.array([s.known for s in gb["states"]])
    nll = {
        "sis_rm": [predictive_nll(world, [x], pp.beta, np.array([s.known for s in rm["states"]]), rm["weights"])
                   for x in test],
        "sis": [predictive_nll(world, [x], pp.beta, np.array([s.known for s in plain["states"]]),
                               plain["weights"]) for x in test],
        "gibbs": [predictive_nll(world, [x], pp.beta, gk, np.full(len(gk), 1.0 / len(gk))) for x in test],
        "omniscient": [predictive_nll(world, [x], pp.beta, np.ones((1, nw), bool), np.ones(1)) for x in test],
        "ignorant": [predictive_nll(world, [x], pp.beta, np.zeros((1, nw), bool), np.ones(1)) for x in test],
    }
    return {"known": known, "delta": delta, "p_sis": plain["p_known"], "p_sis_rm": rm["p_known"],
            "p_gibbs": gb["p_known"], "nll": nll, "true_ll": float(true.ll.sum()),
            "ess_sis": plain["ess_final"], "ess_rm_final": rm["ess_final"], "ess_rm_min": rm["ess_min"],
            "resamples": rm["resamples"], "accept": rm["accept"],
            "cpu_s": {"sis": t1 - t0, "sis_rm": t2 - t1, "gibbs": t3 - t2},
            "updates": model.updates, "scratch": model.scratch}


def main() -> None:
    with stage("nav_knowledge", "train", NavKnowledgeParams) as ctx:
        import numpy as np
        from tqdm import tqdm

        from stages.common.io import write_json, write_npz

        path = ctx.path(WORLDS)
        data = json.loads(path.read_text())
        pp = ctx.params.prepare
        if data["params"] != pp.model_dump():
            fail(f"{WORLDS} was made with other prepare params; run `dvc repro stages/nav_knowledge/dvc.yaml:nav_knowledge-prepare`")
        tp = ctx.params.train
        rng = np.random.default_rng([ctx.seed, 4002])
        res = [infer_agent(a, pp, tp, rng) for a in tqdm(data["agents"], desc="agents", mininterval=2)]
        cpu = {k: float(sum(r["cpu_s"][k] for r in res)) for k in ("sis", "sis_rm", "gibbs")}
        ctx.run.log_metrics({f"time.{k}_cpu_s": v for k, v in cpu.items()})   # timings: MLflow only
        agent_of_wall = np.concatenate([np.full(len(r["known"]), i) for i, r in enumerate(res)])
        arrays = {"agent_of_wall": agent_of_wall,
                  **{k: np.concatenate([r[k] for r in res]) for k in ("known", "delta", "p_sis", "p_sis_rm",
                                                                      "p_gibbs")},
                  **{f"nll_{m}": np.concatenate([r["nll"][m] for r in res])
                     for m in ("sis_rm", "sis", "gibbs", "omniscient", "ignorant")},
                  "ess_sis": np.array([r["ess_sis"] for r in res]),
                  "ess_rm_final": np.array([r["ess_rm_final"] for r in res]),
                  "ess_rm_min": np.array([r["ess_rm_min"] for r in res])}
        write_npz(ctx.path(POSTERIOR), arrays)
        summary = {"agents": len(res), "walls": int(agent_of_wall.size), "particles": tp.particles,
                   "ess_sis_median": float(np.median(arrays["ess_sis"])),
                   "ess_sis_max": float(np.max(arrays["ess_sis"])),
                   "ess_rm_final_median": float(np.median(arrays["ess_rm_final"])),
                   "resamples_mean": float(np.mean([r["resamples"] for r in res])),
                   "accept_mean": float(np.nanmean([r["accept"] for r in res])),
                   "incremental_updates": int(sum(r["updates"] for r in res)),
                   "fields_from_scratch": int(sum(r["scratch"] for r in res))}
        print(f"  {summary}; cpu {cpu}", flush=True)
        write_json(ctx.path(TRAIN_METRICS), summary)


if __name__ == "__main__":
    main()
