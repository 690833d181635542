"""dima train: the world models, at matched parameter count and training steps.

Main run (N = ``n_agents``): ``joint`` (one MLP on the state and all actions), ``seq`` (DIMA: the
chain of N steps revealing one agent's action each, trained denoising-style) and ``joint_chain``
(the ablation: the same chain and training, every step conditioned on the joint action).
Controls, ``joint`` and ``seq`` each: N = ``control_agents`` (the chain has one step), and the main
N with ``rich_episodes`` of data (the data-rich regime). Every model gets the same seed, the
same batches' sizes and Adam steps, and a hidden width chosen so its parameter count is closest
to ``target_params``.

Outputs: data/dima/weights.pt (every model's state dict), data/dima/config.json (sizes and
normalisers), data/dima/model (the main run's models as one MLflow pyfunc model, logged and
registered) and reports/dima/train.json. Then the model-free baseline agent, SB3 PPO
(stages/dima/baseline.py): data/dima/ppo.zip and reports/dima/baseline.json.
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


def main() -> None:
    with stage("dima", "train", PARAMS) as ctx:
        import io
        import time

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json

        from .baseline import run_ppo
        from .pyfunc_io import save_mlflow
        from .wm import nest, train

        limit_threads()       # one thread: MLPs of ~10k parameters gain nothing from two
        arrays = np.load(ctx.path(DATA))
        p, pp = ctx.params.train, ctx.params.prepare
        states, config, metrics = {}, {}, {}
        for run, n, kinds in (("main", pp.n_agents, MAIN_KINDS), ("control", pp.control_agents, CONTROL_KINDS),
                              ("rich", pp.n_agents, CONTROL_KINDS)):
            data = split(arrays, run, "train")
            for kind in kinds:
                t0 = time.process_time()
                model, losses = train(kind, data, n, p.target_params, p.layers, p.steps, p.batch, p.lr, p.sigma_max,
                                      seed=ctx.seed, seq_training=p.seq_training, progress=True)
                cpu = time.process_time() - t0
                key = f"{run}.{kind}"
                states[key] = model.net.state_dict()
                config[key] = {"kind": kind, "n": n, "d": model.d, "hidden": model.hidden, "layers": p.layers,
                               "sigma_max": p.sigma_max, "norm": model.norm.to_dict()}
                metrics[f"{key}.params"] = model.n_params()
                metrics[f"{key}.hidden"] = model.hidden
                metrics[f"{key}.loss_last100"] = float(np.mean(losses[-100:]))
                ctx.run.log_curve(f"train.{key}.loss", losses[:: max(1, len(losses) // 500)])
                ctx.run.log_metrics({f"{key}.cpu_s": cpu, f"{key}.steps_per_cpu_s": p.steps / max(cpu, 1e-9)})
                print(f"  {key}: {model.n_params()} params (width {model.hidden}), loss "
                      f"{np.mean(losses[:20]):.4f} -> {np.mean(losses[-100:]):.4f}, {p.steps / max(cpu, 1e-9):.0f} steps/CPU-s",
                      flush=True)
        buf = io.BytesIO()
        torch.save(states, buf)
        write_bytes(ctx.path(WEIGHTS), buf.getvalue())
        write_json(ctx.path(CONFIG), config)
        counts = [metrics[f"main.{k}.params"] for k in MAIN_KINDS]
        metrics["params_spread_main"] = (max(counts) - min(counts)) / min(counts)
        write_json(ctx.path(TRAIN_METRICS), nest(metrics))
        save_mlflow(ctx.path(MODEL), ctx.path(WEIGHTS), ctx.path(CONFIG))
        ctx.run.log_model(ctx.path(MODEL), "world_models", params={"n_agents": pp.n_agents, **p.model_dump()})
        run_ppo(ctx)       # the model-free baseline agent (SB3 PPO)


if __name__ == "__main__":
    main()
