"""jsp_multipolicy train: the four trained arms for every verdict seed, each arm's seeds trained
together (a seed dimension in the parameters; each seed's network is the one it gets alone):

- ``single``: one policy, SLIM's self-labelling rule (best of ``samples``, cross-entropy);
- ``multi``: K = ``n_policies`` policies in one network, adaptive imitation intensity (the paper);
- ``blind``: multi's K label groups, weights and budget for a network without the policy id (the
  K policies taken out: the control of the multi-vs-single check);
- ``l2d``: L2D (Zhang et al., NeurIPS 2020), GIN over the disjunctive graph, PPO (l2d.py).

The three self-labelled arms see the same training shops, steps and samples at a seed; L2D draws
its own shops (one episode each), ``train.l2d.updates`` updates of ``train.l2d.episodes``, its
budget set to about the multi-policy arm's training CPU time (README: Calibration). On
``common.device`` (CUDA when present under ``auto``).

Outputs: data/jsp_multipolicy/models.pt (every arm's network of every seed),
data/jsp_multipolicy/mlflow (the first verdict seed's single and multi-policy networks as MLflow
pyfunc folders, logged and registered as ``jsp_multipolicy-single`` and ``jsp_multipolicy-multi``,
each with the first two shops of the first seed's first training batch as its input example)
and reports/jsp_multipolicy/train.json (CPU time per arm, last losses and training makespans per
seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import MLFLOW_MODELS, MODELS, TRAIN_METRICS

SERVED = ("single", "multi")        # the networks logged as MLflow models (the first verdict seed's)


def main() -> None:
    with stage("jsp_multipolicy", "train", PARAMS) as ctx:
        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_bytes, write_json
        from stages.common.seeds import per_seed_metrics

        from .experiment import TRAINED, train_all
        from .jsp import random_instances
        from .store import entry, models_bytes, save_mlflow

        limit_threads(1)
        device = select_device(ctx.common.device)
        t, seeds = ctx.params.train, ctx.seeds

        def bar(arm, total):
            return tqdm(total=total, desc=f"train {arm}, seeds {seeds}", mininterval=2)

        nets, hist, cpu = train_all(seeds, t, device=device, progress=bar)
        per_seed = {}
        for s in seeds:
            per_seed[s] = {arm: {"last_loss": hist[arm][s][-1]["loss"],
                                 "train_mean_makespan_first": hist[arm][s][0]["mean_makespan"],
                                 "train_mean_makespan_last": hist[arm][s][-1]["mean_makespan"]}
                           for arm in TRAINED}
        for arm in TRAINED:
            for key in ("loss", "mean_makespan"):
                h = hist[arm][seeds[0]]
                ctx.run.log_curve(f"{arm}.{key}", [x[key] for x in h], [x["step"] for x in h])
            print(f"  {arm}: {cpu[arm]:.1f} s CPU for {len(seeds)} seeds ({device})", flush=True)
        write_bytes(ctx.path(MODELS), models_bytes(nets, seeds))
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(per_seed, cpu_s=cpu, device=str(device)))
        served = {arm: entry(nets[arm][0]) for arm in SERVED}
        # the input example: the first two shops of the first verdict seed's first training batch
        # (policy.train_arm draws them from numpy [seed, 1] the same way)
        M, D = random_instances(t.instances, t.n_jobs, t.n_machines, np.random.default_rng([seeds[0], 1]))
        save_mlflow(ctx.path(MLFLOW_MODELS), served, t.samples, M[:2], D[:2])
        for name in SERVED:
            ctx.run.log_model(ctx.path(MLFLOW_MODELS) / name, name,
                              params={**t.model_dump(exclude={"l2d"}), "name": name, "seed": seeds[0],
                                      "n_policies": served[name]["n_policies"]})


if __name__ == "__main__":
    main()
