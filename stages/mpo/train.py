"""mpo train: the beta grids of DPO, cDPO and ORPO (selected on validation draws), the CMA-ES
search over the loss family at the target flip rate (fitness: mean validation score), the same
search over the DPO/cDPO corner only (the control), and every method's held-out test scores, for
every verdict seed (``ctx.seeds``, one after another; the fits of one step run batched as members of
stacked networks); then the two registered policies (first seed).

Scores are normalised returns of the sampled policy on Pendulum-v1 (0: uniform-random policy,
1: the expert). Outputs: data/mpo/results.json, data/mpo/models/{dpo,discovered} (MLflow pyfunc
folders, logged and registered) and reports/mpo/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, MODELS, REFERENCE, RESULTS, TRAIN_METRICS


def main() -> None:
    with stage("mpo", "train", PARAMS) as ctx:
        import time

        import numpy as np
        import torch
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from . import po
        from .experiment import Scorer, baseline_grid, run_all, score_bounds, setting_names

        limit_threads()       # tiny MLPs, full batch of a few hundred pairs: one thread
        p, t = ctx.params.prepare, ctx.params.train
        refs = torch.load(ctx.path(REFERENCE), weights_only=True)
        data_all = dict(np.load(ctx.path(DATASET)))
        n_steps = len(setting_names(p.flips)) + 2 * t.es_generations
        es_curve: dict[int, list[float]] = {}
        scorers: dict[int, Scorer] = {}

        def one(seed: int) -> dict:
            pre = f"{seed}/"
            data = {k[len(pre):]: v for k, v in data_all.items() if k.startswith(pre)}
            bounds = score_bounds(seed, max(t.episodes, 16))
            scorer = scorers[seed] = Scorer(p, t, refs[str(seed)], data, seed, bounds)
            bar = tqdm(total=n_steps, desc=f"mpo seed {seed}: grids and searches", mininterval=2)
            curve = es_curve[seed] = []

            def progress(msg):
                if msg.startswith("es gen"):
                    curve.append(float(msg.rsplit(" ", 1)[1]))
                bar.set_postfix_str(msg)
                bar.update(1)
            out = run_all(scorer, p, t, seed, progress=progress)
            bar.close()
            return {"bounds": bounds, **out}

        t0 = time.process_time()
        per_seed = run_seeds(ctx.seeds, one, "train seed")
        fit_s = time.process_time() - t0
        first = ctx.seeds[0]
        ctx.run.log_curve("es.best_val_score", es_curve[first])
        tgt = f"flip{p.target_flip:g}"
        write_json(ctx.path(RESULTS), {"flips": p.flips, "target_flip": p.target_flip,
                                       "seeds": {str(s): r for s, r in per_seed.items()}})
        # the registered policies (first verdict seed): beta-tuned DPO and the discovered loss,
        # trained on test draw 0 at the target flip rate
        grid = baseline_grid(t)
        out = per_seed[first]
        models = {"dpo": grid[out["results"][tgt]["selected"]["dpo_"]], "discovered": out["discovered"]}
        for name, theta in models.items():
            pol = scorers[first].train(theta, f"{tgt}/test0")
            po.save_policy_mlflow(ctx.path(f"{MODELS}/{name}"), pol.state_dict(), p.hidden, theta,
                                  scorers[first].data[f"{tgt}/test0/s"][:3])     # three of its training states
            ctx.run.log_model(ctx.path(f"{MODELS}/{name}"), f"policy-{name}",
                              params={"flip": p.target_flip, "seed": first,
                                      **{f"loss.{k}": v for k, v in theta.items()}})
        fits = sum(r["fits"] for r in per_seed.values())
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(
            {s: {"fits": r["fits"], "discovered": r["discovered"], "corner_search": r["corner_search"],
                 "bounds": r["bounds"]} for s, r in per_seed.items()},
            selected={str(s): {k: v["selected"] for k, v in r["results"].items()} for s, r in per_seed.items()}))
        ctx.run.log_metrics({"fit_cpu_s": fit_s, "po_steps_per_cpu_s": fits * t.steps / max(fit_s, 1e-9)})
        print(f"  {fits} fits over {len(per_seed)} seeds in {fit_s:.1f} s CPU", flush=True)

if __name__ == "__main__":
    main()
