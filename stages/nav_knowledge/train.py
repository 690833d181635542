"""nav_knowledge train: posterior over which walls each agent knew, and held-out predictions,
for every verdict seed.

Per verdict seed (``ctx.seeds``) and agent (world + knowledge set), on its training trajectories:
* plain SIS, SIS with resample-move, and Gibbs (stages/nav_knowledge/infer.py): P(known) per wall,
  ESS;
* the musts' control arm, ``static``: SIS resample-move (same particles and moves) under the static
  navigator (``Model(replanning=False)``: the agent plans with its knowledge alone and never adds
  what it sees), i.e. the paper's optimistic replanning taken out of the inference;
* behaviour relevance of every wall: |log p(train | K_true with the wall flipped) -
  log p(train | K_true)| (the evaluate stage thresholds it);
* held-out predictive NLL of each held-out trajectory (always under the replanning navigator) for
  the knowledge states of: the SIS-RM posterior, plain SIS, the Gibbs states, the static arm's
  posterior, the prior (``particles`` draws of K from the prior, equal weights: SIS with the
  trajectories taken out, the same budget of knowledge states as the posterior), the omniscient
  agent (knows every wall) and the ignorant one (knows none).
A seed's figures depend on that seed alone: every generator is seeded from (seed, stream[, agent]).
Writes data/nav_knowledge/posterior.npz (arrays keyed ``s<seed>/<name>``, agents concatenated)
and reports/nav_knowledge/train.json (per seed: ESS, resamplings, repairs).
"""
from __future__ import annotations

import json
import time

from stages.common.runtime.stage import fail, stage

from .params import NavKnowledgeParams
from .paths import POSTERIOR, TRAIN_METRICS, WORLDS
from .world import load_world

NLL_ARMS = ("sis_rm", "sis", "gibbs", "static", "prior", "omniscient", "ignorant")
WALL_ARRAYS = ("known", "delta", "p_sis", "p_sis_rm", "p_gibbs", "p_static")
RNG_MAIN, RNG_STATIC, RNG_PRIOR = 4002, 4004, 4005        # streams of a seed's generators


def infer_agent(agent: dict, pp, tp, rng, seed: int, index: int) -> dict:
    """Everything train computes for one agent. ``rng`` draws the three samplers of the paper's
    model in turn (as the study did with one seed); the static arm and the prior draws have
    generators of their own, (seed, stream, agent index)."""
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
    static_model = Model(world, train, pp.beta, replanning=False)
    st = sis(static_model, np.random.default_rng([seed, RNG_STATIC, index]), tp.particles, pp.p_known,
             resample_move=True, ess_frac=tp.ess_frac, moves=tp.moves)
    t4 = time.process_time()
    nw = world.n_walls
    prior = np.random.default_rng([seed, RNG_PRIOR, index]).random((tp.particles, nw)) < pp.p_known
    gk = np.array([s.known for s in gb["states"]])
    mixtures = {                                          # arm -> (knowledge states, weights)
        "sis_rm": (np.array([s.known for s in rm["states"]]), rm["weights"]),
        "sis": (np.array([s.known for s in plain["states"]]), plain["weights"]),
        "gibbs": (gk, np.full(len(gk), 1.0 / len(gk))),
        "static": (np.array([s.known for s in st["states"]]), st["weights"]),
        "prior": (prior, np.full(tp.particles, 1.0 / tp.particles)),
        "omniscient": (np.ones((1, nw), bool), np.ones(1)),
        "ignorant": (np.zeros((1, nw), bool), np.ones(1)),
    }
    nll = {arm: [predictive_nll(world, [x], pp.beta, K, w) for x in test] for arm, (K, w) in mixtures.items()}
    return {"known": known, "delta": delta, "p_sis": plain["p_known"], "p_sis_rm": rm["p_known"],
            "p_gibbs": gb["p_known"], "p_static": st["p_known"], "nll": nll, "true_ll": float(true.ll.sum()),
            "ess_sis": plain["ess_final"], "ess_rm_final": rm["ess_final"], "ess_rm_min": rm["ess_min"],
            "resamples": rm["resamples"], "accept": rm["accept"], "resamples_static": st["resamples"],
            "cpu_s": {"sis": t1 - t0, "sis_rm": t2 - t1, "gibbs": t3 - t2, "static": t4 - t3},
            "updates": model.updates, "scratch": model.scratch}


def infer_seed(agents: list[dict], pp, tp, seed: int, progress: bool = True) -> tuple[dict, dict, dict]:
    """One verdict seed: (arrays for posterior.npz, its train.json figures, CPU seconds per sampler)."""
    import numpy as np
    from tqdm import tqdm

    rng = np.random.default_rng([seed, RNG_MAIN])
    res = [infer_agent(a, pp, tp, rng, seed, i)
           for i, a in enumerate(tqdm(agents, desc=f"seed {seed} agents", mininterval=2, disable=not progress))]
    cpu = {k: float(sum(r["cpu_s"][k] for r in res)) for k in res[0]["cpu_s"]}
    agent_of_wall = np.concatenate([np.full(len(r["known"]), i) for i, r in enumerate(res)])
    arrays = {"agent_of_wall": agent_of_wall,
              **{k: np.concatenate([r[k] for r in res]) for k in WALL_ARRAYS},
              **{f"nll_{m}": np.concatenate([r["nll"][m] for r in res]) for m in NLL_ARMS},
              "ess_sis": np.array([r["ess_sis"] for r in res]),
              "ess_rm_final": np.array([r["ess_rm_final"] for r in res]),
              "ess_rm_min": np.array([r["ess_rm_min"] for r in res])}
    figures = {"agents": len(res), "walls": int(agent_of_wall.size), "particles": tp.particles,
               "ess_sis_median": float(np.median(arrays["ess_sis"])),
               "ess_sis_max": float(np.max(arrays["ess_sis"])),
               "ess_rm_final_median": float(np.median(arrays["ess_rm_final"])),
               "resamples_mean": float(np.mean([r["resamples"] for r in res])),
               "resamples_static_mean": float(np.mean([r["resamples_static"] for r in res])),
               "accept_mean": float(np.nanmean([r["accept"] for r in res])),
               "incremental_updates": int(sum(r["updates"] for r in res)),
               "fields_from_scratch": int(sum(r["scratch"] for r in res))}
    return arrays, figures, cpu


def main() -> None:
    with stage("nav_knowledge", "train", NavKnowledgeParams) as ctx:
        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics, run_seeds

        data = json.loads(ctx.path(WORLDS).read_text())
        pp, tp = ctx.params.prepare, ctx.params.train
        if data["params"] != pp.model_dump() or "seeds" not in data:
            fail(f"{WORLDS} was made with other prepare params; run `dvc repro stages/nav_knowledge/dvc.yaml:nav_knowledge-prepare`")
        missing = [s for s in ctx.seeds if str(s) not in data["seeds"]]
        if missing:
            fail(f"{WORLDS} has no agents for verdict seeds {missing}; run "
                 f"`dvc repro stages/nav_knowledge/dvc.yaml:nav_knowledge-prepare`")
        out = run_seeds(ctx.seeds, lambda s: infer_seed(data["seeds"][str(s)], pp, tp, s), what="seed")
        arrays = {f"s{s}/{k}": v for s, (a, _, _) in out.items() for k, v in a.items()}
        cpu = {k: sum(c[k] for _, _, c in out.values()) for k in next(iter(out.values()))[2]}
        ctx.run.log_metrics({f"time.{k}_cpu_s": v for k, v in cpu.items()})   # timings: MLflow only
        write_npz(ctx.path(POSTERIOR), arrays)
        figures = {s: f for s, (_, f, _) in out.items()}
        for s, f in figures.items():
            print(f"  seed {s}: {f}", flush=True)
        print(f"  cpu s over the seeds: {cpu}", flush=True)
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(figures))


if __name__ == "__main__":
    main()
