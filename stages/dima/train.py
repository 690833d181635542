"""dima train: the world models, at matched parameter count and training steps.

Main run (N = ``n_agents``): ``joint`` (one MLP on the state and all actions), ``seq`` (DIMA: the
chain of N steps revealing one agent's action each, trained denoising-style) and ``joint_chain``
(the ablation: the same chain and training, every step conditioned on the joint action).
Controls, ``joint`` and ``seq`` each: N = ``control_agents`` (the chain has one step), and the main
N with ``rich_episodes`` of data (the data-rich regime). For every verdict seed (``ctx.seeds``, one
after another in this process), every model gets that seed, the same batches' sizes, at most the
same Adam steps, the same early stopping (the held-out one-step loss on the run's validation
episodes every ``eval_every`` steps, the best weights kept, a stop after ``patience`` checks
without improvement), and a hidden width chosen so its parameter count is closest to
``target_params``.

Outputs: data/dima/weights.pt (every seed's models' state dicts, keys ``s<seed>/<run>.<kind>``),
data/dima/config.json (sizes and normalisers, ``{seed: {run.kind: ...}}``), data/dima/model (the
MLflow pyfunc model: it serves the first verdict seed's main-run models; its input example is three
of that seed's held-out transitions; logged and registered)
and reports/dima/train.json (per seed). Then the model-free baseline agent, SB3 PPO, for every
seed (stages/dima/baseline.py): data/dima/ppo.zip and reports/dima/baseline.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CONFIG, DATA, MODEL, TRAIN_METRICS, WEIGHTS

MAIN_KINDS = ("joint", "seq", "joint_chain")
CONTROL_KINDS = ("joint", "seq")


def split(arrays, run: str, part: str) -> dict:
    pre = f"{run}_{part}_"
    return {k[len(pre):]: arrays[k] for k in arrays.files if k.startswith(pre)}


def train_seed(arrays, seed: int, p, pp, progress: bool = False, log=None) -> tuple[dict, dict, dict]:
    """One verdict seed's world models: (state dicts, configs, metrics), keyed ``run.kind``. Every
    model is early-stopped by the same rule on its run's validation episodes (wm.train)."""
    import time

    import numpy as np

    from .paths import seed_key
    from .wm import train

    states, config, metrics = {}, {}, {}
    for run, n, kinds in (("main", pp.n_agents, MAIN_KINDS), ("control", pp.control_agents, CONTROL_KINDS),
                          ("rich", pp.n_agents, CONTROL_KINDS)):
        data = split(arrays, seed_key(seed, run), "train")
        val = split(arrays, seed_key(seed, run), "val")
        for kind in kinds:
            t0 = time.process_time()
            info: dict = {}
            model, losses = train(kind, data, n, p.target_params, p.layers, p.steps, p.batch, p.lr, p.sigma_max,
                                  seed=seed, seq_training=p.seq_training, progress=progress, val=val,
                                  eval_every=p.eval_every, patience=p.patience, info=info)
            cpu = time.process_time() - t0
            key = f"{run}.{kind}"
            states[key] = model.net.state_dict()
            config[key] = {"kind": kind, "n": n, "d": model.d, "hidden": model.hidden, "layers": p.layers,
                           "sigma_max": p.sigma_max, "norm": model.norm.to_dict()}
            metrics[f"{key}.params"] = model.n_params()
            metrics[f"{key}.hidden"] = model.hidden
            metrics[f"{key}.loss_last100"] = float(np.mean(losses[-100:]))
            metrics[f"{key}.best_step"] = info["best_step"]
            metrics[f"{key}.steps_run"] = info["steps_run"]
            metrics[f"{key}.val_best"] = info["val_best"]
            if log is not None:
                log(seed, key, losses, cpu)
            print(f"  seed {seed} {key}: {model.n_params()} params (width {model.hidden}), loss "
                  f"{np.mean(losses[:20]):.4f} -> {np.mean(losses[-100:]):.4f}, kept step {info['best_step']} of "
                  f"{info['steps_run']} (val {info['val_best']:.4f}), {len(losses) / max(cpu, 1e-9):.0f} steps/CPU-s",
                  flush=True)
    counts = [metrics[f"main.{k}.params"] for k in MAIN_KINDS]
    metrics["params_spread_main"] = (max(counts) - min(counts)) / min(counts)
    return states, config, metrics


def main() -> None:
    with stage("dima", "train", PARAMS) as ctx:
        import io

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .baseline import run_ppo
        from .paths import seed_key
        from .pyfunc_io import input_example, save_mlflow
        from .wm import nest

        limit_threads()       # one thread: MLPs of ~10k parameters gain nothing from two
        arrays = np.load(ctx.path(DATA))
        p, pp = ctx.params.train, ctx.params.prepare
        states, config = {}, {}

        def log(seed, key, losses, cpu):
            ctx.run.log_curve(f"train.s{seed}.{key}.loss", losses[:: max(1, len(losses) // 500)])
            ctx.run.log_metrics({f"s{seed}.{key}.cpu_s": cpu, f"s{seed}.{key}.steps_per_cpu_s": len(losses) / max(cpu, 1e-9)})

        def one(seed: int) -> dict:
            st, cfg, met = train_seed(arrays, seed, p, pp, progress=True, log=log)
            states.update({f"s{seed}/{k}": v for k, v in st.items()})
            config[str(seed)] = cfg
            return nest(met)

        per = run_seeds(ctx.seeds, one, what="dima train seed")
        buf = io.BytesIO()
        torch.save(states, buf)
        write_bytes(ctx.path(WEIGHTS), buf.getvalue())
        write_json(ctx.path(CONFIG), config)
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(per))
        held_out = split(arrays, seed_key(ctx.seeds[0], "main"), "test")     # the served seed's held-out transitions
        save_mlflow(ctx.path(MODEL), ctx.path(WEIGHTS), ctx.path(CONFIG), input_example(held_out["s"][:3], held_out["a"][:3]))
        ctx.run.log_model(ctx.path(MODEL), "world_models", params={"n_agents": pp.n_agents, **p.model_dump()})
        run_ppo(ctx)       # the model-free baseline agent (SB3 PPO), every verdict seed


if __name__ == "__main__":
    main()
