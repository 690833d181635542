"""hephaestus_qosd train: Forge and Morph on the training graphs, per verdict seed.

For every verdict seed (``ctx.seeds``, one after another in this process), every training graph
of that seed and every cost kind: Forge (path stressing + trim) gives a feasible perturbation; a
local search (random restarts around it, repaired; draws from ``rng(seed, 1)``) refines it into the
training label; each edge is one row (its features, its label's raise over T). The seed's mixture
of conditional VAEs (initialised and batched from the seed) is fitted to its rows (Adam) and saved
as an MLflow pyfunc model; the first seed's is logged and registered.

Outputs: data/hephaestus_qosd/models/seed_<s> (MLflow model folders) and
reports/hephaestus_qosd/train.json (per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import INSTANCES, MODELS, TRAIN_METRICS, model_dir


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


def train_seed(graphs: list, costs: list[str], p, fp, seed: int, progress: bool = True) -> dict:
    """One verdict seed's labels and Morph: ``{"model", "losses", "figures", "cpu", "example"}``
    (``example``: the condition rows of its first three training edges); depends on
    ``seed`` alone (labels from ``rng(seed, 1)``, the CVAE from :func:`cvae.train_model`)."""
    import time

    import numpy as np

    from stages.common.seeds import rng

    from .cvae import train_model

    t0 = time.process_time()
    x, c, gains = training_rows(graphs, costs, fp, p.label_tries, rng(seed, 1), progress)
    label_s = time.process_time() - t0
    t0 = time.process_time()
    model, losses = train_model(x, c, p, seed, progress)
    cvae_s = time.process_time() - t0
    figures = {"rows": int(len(x)), "instances": len(gains), "label_cost_over_forge_mean": float(np.mean(gains)),
               "loss_first": losses[0], "loss_last50_mean": float(np.mean(losses[-50:]))}
    return {"model": model, "losses": losses, "figures": figures, "cpu": {"label": label_s, "cvae": cvae_s},
            "example": c[:3]}


def main() -> None:
    with stage("hephaestus_qosd", "train", PARAMS) as ctx:
        import json
        import shutil

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .cvae import save_mlflow
        from .qosd import Instance

        limit_threads()        # one torch/BLAS thread: tiny MLPs and Dijkstras gain nothing from two

        data = json.loads(ctx.path(INSTANCES).read_text())
        p, fp = ctx.params.train, ctx.params.forge
        missing = [s for s in ctx.seeds if str(s) not in data.get("seeds", {})]
        if missing:
            fail(f"{INSTANCES} has no graphs for verdict seeds {missing}; run "
                 f"`dvc repro stages/hephaestus_qosd/dvc.yaml:hephaestus_qosd-prepare`")
        shutil.rmtree(ctx.path(MODELS), ignore_errors=True)      # no model of another profile's seeds stays

        def one(seed: int) -> dict:
            graphs = [Instance.from_dict(d) for d in data["seeds"][str(seed)]["train"]]
            out = train_seed(graphs, data["costs"], p, fp, seed)
            save_mlflow(ctx.path(model_dir(seed)), out["model"], p, out["example"])   # its first three training edges
            return out

        out = run_seeds(ctx.seeds, one, what="seed")
        first = ctx.seeds[0]
        ctx.run.log_curve("train.loss", out[first]["losses"])
        ctx.run.log_model(ctx.path(model_dir(first)), "morph",
                          params={"seed": first, "rows": out[first]["figures"]["rows"], **p.model_dump()})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics({s: o["figures"] for s, o in out.items()}))
        # timings vary run to run: MLflow metrics, not the (deterministic) metrics file
        cpu = {k: sum(o["cpu"][k] for o in out.values()) for k in ("label", "cvae")}
        ctx.run.log_metrics({"label_cpu_s": cpu["label"], "cvae_cpu_s": cpu["cvae"],
                             "cvae_steps_per_cpu_s": p.steps * len(out) / max(cpu["cvae"], 1e-9)})
        for s, o in out.items():
            f = o["figures"]
            print(f"  seed {s}: {f['rows']} edge rows from {f['instances']} instances; labels cost "
                  f"{f['label_cost_over_forge_mean']:.3f} x Forge; loss {f['loss_first']:.3f} -> {f['loss_last50_mean']:.3f}",
                  flush=True)
        print(f"  CPU s over {len(out)} seeds: labels {cpu['label']:.1f}, CVAE {cpu['cvae']:.1f}", flush=True)


if __name__ == "__main__":
    main()
