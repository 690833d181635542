"""hephaestus_qosd train: Forge and Morph on the training graphs.

For every training graph and cost kind: Forge (path stressing + trim) gives a feasible
perturbation; a local search (random restarts around it, repaired) refines it into the training
label; each edge is one row (its features, its label's raise over T). The mixture of conditional
VAEs is fitted to the rows (Adam), saved as an MLflow pyfunc model, logged and registered.

Outputs: data/hephaestus_qosd/model (MLflow model folder) and reports/hephaestus_qosd/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import INSTANCES, MODEL, TRAIN_METRICS


def training_rows(graphs: list, costs: list[str], forge_p, label_tries: int, rng, progress: bool = True):
    """(x, c, label cost / Forge cost per instance) over every graph and cost kind."""
    import numpy as np
    from tqdm import tqdm

    from .cvae import edge_features
    from .qosd import forge, local_search

    xs, cs, gains = [], [], []
    for g in tqdm(graphs, desc="hephaestus_qosd: training labels", disable=not progress, mininterval=2):
        for kind in costs:
            inst = g.with_kind(kind)
            fd = forge(inst, forge_p.step_frac, forge_p.credit)
            label = local_search(inst, fd, label_tries, rng, forge_p.step_frac, forge_p.credit)
            xs.append(label / inst.T)
            cs.append(edge_features(inst, fd))
            gains.append(inst.cost(label) / max(inst.cost(fd), 1e-12))
    return np.concatenate(xs).astype(np.float32), np.concatenate(cs), gains


def main() -> None:
    with stage("hephaestus_qosd", "train", PARAMS) as ctx:
        import json
        import time

        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json

        from .cvae import save_mlflow, train_model
        from .qosd import Instance

        limit_threads()        # one torch/BLAS thread: tiny MLPs and Dijkstras gain nothing from two

        data = json.loads(ctx.path(INSTANCES).read_text())
        graphs = [Instance.from_dict(d) for d in data["train"]]
        p, fp = ctx.params.train, ctx.params.forge
        rng = np.random.default_rng([ctx.seed, 1])
        t0 = time.process_time()
        x, c, gains = training_rows(graphs, data["costs"], fp, p.label_tries, rng)
        label_s = time.process_time() - t0
        t0 = time.process_time()
        model, losses = train_model(x, c, p, ctx.seed)
        train_s = time.process_time() - t0
        ctx.run.log_curve("train.loss", losses)
        save_mlflow(ctx.path(MODEL), model, p)
        ctx.run.log_model(ctx.path(MODEL), "morph", params={"rows": len(x), **p.model_dump()})
        write_json(ctx.path(TRAIN_METRICS), {
            "rows": int(len(x)), "instances": len(gains), "label_cost_over_forge_mean": float(np.mean(gains)),
            "loss_first": losses[0], "loss_last50_mean": float(np.mean(losses[-50:]))})
        # timings vary run to run: MLflow metrics, not the (deterministic) metrics file
        timing = {"label_cpu_s": label_s, "cvae_cpu_s": train_s, "cvae_steps_per_cpu_s": p.steps / max(train_s, 1e-9)}
        ctx.run.log_metrics(timing)
        print(f"  {len(x)} edge rows from {len(gains)} instances; labels cost {np.mean(gains):.3f} x Forge; "
              f"loss {losses[0]:.3f} -> {np.mean(losses[-50:]):.3f}; CPU s: labels {label_s:.1f}, CVAE {train_s:.1f} "
              f"({timing['cvae_steps_per_cpu_s']:.0f} steps/s)", flush=True)


if __name__ == "__main__":
    main()
