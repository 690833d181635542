"""mpo train: the beta grids of DPO, cDPO and ORPO (selected on validation draws), the CMA-ES
search over the loss family at the target flip rate (fitness: mean validation score), and every
method's held-out test scores; then the two registered policies.

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

        from . import po
        from .experiment import Scorer, baseline_grid, run_all, score_bounds, setting_names

        limit_threads()       # tiny MLPs, full batch of a few hundred pairs: one thread
        p, t = ctx.params.prepare, ctx.params.train
        ref = torch.load(ctx.path(REFERENCE), weights_only=True)
        data = dict(np.load(ctx.path(DATASET)))
        bounds = score_bounds(ctx.seed, max(t.episodes, 16))
        scorer = Scorer(p, t, ref, data, ctx.seed, bounds)
        n_steps = len(setting_names(p.flips)) + t.es_generations
        bar = tqdm(total=n_steps, desc="mpo: grids and search", mininterval=2)
        es_curve = []

        def progress(msg):
            if msg.startswith("es gen"):
                es_curve.append(float(msg.rsplit(" ", 1)[1]))
            bar.set_postfix_str(msg)
            bar.update(1)

        t0 = time.process_time()
        out = run_all(scorer, p, t, ctx.seed, progress=progress)
        bar.close()
        fit_s = time.process_time() - t0
        ctx.run.log_curve("es.best_val_score", es_curve)
        tgt = f"flip{p.target_flip:g}"
        write_json(ctx.path(RESULTS), {"bounds": bounds, "flips": p.flips, "target_flip": p.target_flip, **out})
        # the registered policies: beta-tuned DPO and the discovered loss, trained on test draw 0 at the target
        grid = baseline_grid(t)
        models = {"dpo": grid[out["results"][tgt]["selected"]["dpo_"]], "discovered": out["discovered"]}
        for name, theta in models.items():
            pol = scorer.train(theta, f"{tgt}/test0")
            po.save_policy_mlflow(ctx.path(f"{MODELS}/{name}"), pol.state_dict(), p.hidden, theta)
            ctx.run.log_model(ctx.path(f"{MODELS}/{name}"), f"policy-{name}",
                              params={"flip": p.target_flip, **{f"loss.{k}": v for k, v in theta.items()}})
        write_json(ctx.path(TRAIN_METRICS), {
            "fits": out["fits"], "discovered": out["discovered"], "es_history": out["es_history"],
            "selected": {s: r["selected"] for s, r in out["results"].items()}, "bounds": bounds})
        ctx.run.log_metrics({"fit_cpu_s": fit_s, "po_steps_per_cpu_s": out["fits"] * t.steps / max(fit_s, 1e-9)})
        print(f"  {out['fits']} fits in {fit_s:.1f} s CPU; discovered {out['discovered']}", flush=True)


if __name__ == "__main__":
    main()
