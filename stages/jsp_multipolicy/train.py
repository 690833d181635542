"""jsp_multipolicy train: the single self-labelled policy (SLIM, K = 1) and the multi-policy
network (K = train.n_policies, adaptive imitation intensity), on the same stream of random
training shops, the same steps and the same samples per shop, on ``common.device`` (CUDA when
present under ``auto``; on CPU the results are bit for bit those of the CPU-only code).

Outputs: data/jsp_multipolicy/models.pt (both state dicts and their sizes),
data/jsp_multipolicy/mlflow (one MLflow pyfunc folder per network, logged and registered as
``jsp_multipolicy-single`` and ``jsp_multipolicy-multi``: ``mlflow.pyfunc.load_model(
"models:/jsp_multipolicy-multi@ledger")``) and reports/jsp_multipolicy/train.json (CPU time,
steps/s, last losses and training makespans).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import MLFLOW_MODELS, MODELS, TRAIN_METRICS


def main() -> None:
    with stage("jsp_multipolicy", "train", PARAMS) as ctx:
        import time

        from tqdm import tqdm

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_bytes, write_json

        from .policy import train_policy
        from .store import entry, save_mlflow, to_bytes

        limit_threads(1)
        device = select_device(ctx.common.device)
        t = ctx.params.train
        kw = t.model_dump(exclude={"n_policies", "tau"})
        out, metrics = {}, {}
        for name, K, tau in (("single", 1, 1.0), ("multi", t.n_policies, t.tau)):
            c0, w0 = time.process_time(), time.perf_counter()
            with tqdm(total=t.steps, desc=f"train {name}", mininterval=2) as bar:
                net, hist = train_policy(K, tau=tau, seed=ctx.seed, kind="jssp", progress=bar, device=device, **kw)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            out[name] = entry(net)
            for key in ("loss", "best_makespan", "weight_mean"):
                ctx.run.log_curve(f"{name}.{key}", [h[key] for h in hist], [h["step"] for h in hist])
            metrics[name] = {"cpu_s": cpu, "steps_per_s": t.steps / cpu, "last_loss": hist[-1]["loss"],
                             "train_best_makespan_first": hist[0]["best_makespan"],
                             "train_best_makespan_last": hist[-1]["best_makespan"]}
            if device.type != "cpu":
                metrics[name] |= {"device": str(device), "wall_s": wall, "steps_per_wall_s": t.steps / wall}
            print(f"  {name}: {cpu:.1f} s CPU, {t.steps / cpu:.1f} steps/s ({device})", flush=True)
        write_bytes(ctx.path(MODELS), to_bytes(out))
        write_json(ctx.path(TRAIN_METRICS), metrics)
        save_mlflow(ctx.path(MLFLOW_MODELS), out, t.samples)
        for name in out:
            ctx.run.log_model(ctx.path(MLFLOW_MODELS) / name, name, params={**t.model_dump(), "name": name,
                                                                           "n_policies": out[name]["n_policies"]})


if __name__ == "__main__":
    main()
