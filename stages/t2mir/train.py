"""t2mir train: the four in-context transformers (dense, token-wise MoE, task-wise MoE with the
contrastive router loss, T2MIR = both) on the training tasks' in-context datasets, same seed, same
batches, parameter-matched (the dense FFN is as wide as T2MIR's MoE layer has parameters).

Outputs: data/t2mir/models (``<variant>.pt`` state dicts, ``<variant>.json`` configs, ``losses.npz``
and the MLflow pyfunc folders ``<variant>_pyfunc``, each logged and registered) and
reports/t2mir/train.json (final loss and parameter count per variant; the CPU seconds go to MLflow).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import MODELS, TASKS, TRAIN_METRICS


def main() -> None:
    with stage("t2mir", "train", PARAMS) as ctx:
        import io
        import json
        import time

        import numpy as np
        import torch
        from tqdm import tqdm

        from stages.common.io import atomic_dir, write_json
        from stages.common.mlmodel import save_pyfunc

        from .icl import MODEL_KEYS, VARIANTS, load_tasks
        from .run import train_model

        from stages.common.device import limit_threads, select_device

        limit_threads()
        device = select_device(ctx.common.device)
        tasks = load_tasks(ctx.path(TASKS))
        size, (goals, pools) = tasks["size"], tasks["train"]
        p = ctx.params.train
        cfg = p.model_dump()
        metrics, models, curves = {}, {}, {}
        with tqdm(total=p.steps * len(VARIANTS), desc="t2mir train (4 variants)", mininterval=2) as bar:
            for variant in VARIANTS:
                t0 = time.process_time()
                model, losses = train_model(size, variant, goals, pools, seed=ctx.seed, progress=bar,
                                             device=device, **cfg)
                tail = max(1, len(losses) // 10)
                models[variant], curves[variant] = model, np.array(losses)
                ctx.run.log_curve(f"{variant}.loss", losses)
                metrics[variant] = {"final_loss": float(np.mean(losses[-tail:])),
                                    "n_params": sum(q.numel() for q in model.parameters())}
                ctx.run.log_metrics({f"{variant}.train_cpu_s": time.process_time() - t0})   # MLflow only: volatile
        code = ctx.path("stages/t2mir/pyfunc.py")
        configs = {v: {"size": size, "k": p.k, "variant": v, **{key: cfg[key] for key in MODEL_KEYS}} for v in VARIANTS}
        with atomic_dir(ctx.path(MODELS)) as tmp:
            from stages.common.io import write_npz

            write_npz(tmp / "losses.npz", curves)
            for v, model in models.items():
                buf = io.BytesIO()
                torch.save(model.state_dict(), buf)
                (tmp / f"{v}.pt").write_bytes(buf.getvalue())
                (tmp / f"{v}.json").write_text(json.dumps(configs[v], indent=1, sort_keys=True))
                save_pyfunc(tmp / f"{v}_pyfunc", code, {"weights": tmp / f"{v}.pt", "config": tmp / f"{v}.json"})
        for v in VARIANTS:
            ctx.run.log_model(ctx.path(MODELS) / f"{v}_pyfunc", v, params=configs[v])
        write_json(ctx.path(TRAIN_METRICS), metrics)
        print("  final loss " + ", ".join(f"{v} {m['final_loss']:.3f}" for v, m in metrics.items()), flush=True)


if __name__ == "__main__":
    main()
