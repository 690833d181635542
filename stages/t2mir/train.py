"""t2mir train: for every verdict seed, the three in-context transformers on the seed's training
tasks' in-context datasets, same seed, same batches: ``dense`` (parameter-matched: its FFN is as
wide as T2MIR's MoE layer has parameters), ``t2mir`` (token-wise MoE with the balance loss and
task-wise MoE with the contrastive router loss, concatenated) and ``uniform`` (T2MIR with its
routing taken out: the same experts mixed with equal weights, no router losses; the control).

Outputs: data/t2mir/models (``s<seed>/<variant>.pt`` state dicts, ``<variant>.json`` configs,
``losses.npz`` (keys ``s<seed>/<variant>``) and, for the first verdict seed, the MLflow pyfunc
folders ``<variant>_pyfunc``, each logged and registered) and reports/t2mir/train.json (per seed:
final loss and parameter count per variant; the CPU seconds go to MLflow).
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

        from stages.common.device import limit_threads, select_device
        from stages.common.io import atomic_dir, write_json, write_npz
        from stages.common.mlmodel import save_pyfunc
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .icl import MODEL_KEYS, STUDY_VARIANTS, example_rows, load_tasks
        from .run import train_seed

        limit_threads()
        device = select_device(ctx.common.device)
        p = ctx.params.train
        cfg = p.model_dump()
        models, curves = {}, {}
        size = None
        with tqdm(total=p.steps * len(STUDY_VARIANTS) * len(ctx.seeds),
                  desc=f"t2mir train ({len(STUDY_VARIANTS)} variants x {len(ctx.seeds)} seeds)", mininterval=2) as bar:
            def one(seed: int) -> dict:
                nonlocal size
                tasks = load_tasks(ctx.path(TASKS), seed)
                size = tasks["size"]
                t0 = time.process_time()
                ms, cs = train_seed(tasks, cfg, seed, STUDY_VARIANTS, progress=bar, device=device)
                ctx.run.log_metrics({f"s{seed}.train_cpu_s": time.process_time() - t0})   # MLflow only: volatile
                out = {}
                for v in STUDY_VARIANTS:
                    models[(seed, v)], curves[f"s{seed}/{v}"] = ms[v], np.array(cs[v])
                    tail = max(1, len(cs[v]) // 10)
                    out[v] = {"final_loss": float(np.mean(cs[v][-tail:])),
                              "n_params": sum(q.numel() for q in ms[v].parameters())}
                return out

            results = run_seeds(ctx.seeds, one, what="t2mir train seed")
        code = ctx.path("stages/t2mir/pyfunc.py")
        configs = {v: {"size": size, "k": p.k, "variant": v, **{key: cfg[key] for key in MODEL_KEYS}}
                   for v in STUDY_VARIANTS}
        first = ctx.seeds[0]
        # the served models' input example: a context of each of the first seed's first three held-out tasks
        example = example_rows(load_tasks(ctx.path(TASKS), first), p.k, first)
        with atomic_dir(ctx.path(MODELS)) as tmp:
            write_npz(tmp / "losses.npz", curves)
            for v in STUDY_VARIANTS:
                (tmp / f"{v}.json").write_text(json.dumps(configs[v], indent=1, sort_keys=True))
            for (seed, v), model in models.items():
                buf = io.BytesIO()
                torch.save(model.state_dict(), buf)
                (tmp / f"s{seed}").mkdir(exist_ok=True)
                (tmp / f"s{seed}" / f"{v}.pt").write_bytes(buf.getvalue())
            for v in STUDY_VARIANTS:        # the served models: the first verdict seed's
                save_pyfunc(tmp / f"{v}_pyfunc", code, {"weights": tmp / f"s{first}" / f"{v}.pt",
                                                        "config": tmp / f"{v}.json"}, input_example=example)
        for v in STUDY_VARIANTS:
            ctx.run.log_model(ctx.path(MODELS) / f"{v}_pyfunc", v, params=configs[v])
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(results))
        r = results[first]
        print(f"  seed {first} final loss " + ", ".join(f"{v} {m['final_loss']:.3f}" for v, m in r.items()), flush=True)


if __name__ == "__main__":
    main()
