"""coral_diffusion train: four class-conditional DDPMs, with and without CORAL, on the long-tailed
digits and on the balanced control.

Every model starts from the same weights (same seed), sees the same step count, batch size and
noise stream; the only difference between a pair is the supervised contrastive term on the
bottleneck. The long-tailed pair is saved as MLflow pyfunc models (pyfunc.py: predict samples
images for given classes and a seed), logged and registered; the control pair as state dicts.

Outputs: data/coral_diffusion/model_ddpm, data/coral_diffusion/model_coral (MLflow model folders),
data/coral_diffusion/control.pt and reports/coral_diffusion/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CONTROL, DATA, MODEL_CORAL, MODEL_DDPM, TRAIN_METRICS

METHODS = ("ddpm", "coral")
SETS = ("lt", "bal")


def main() -> None:
    with stage("coral_diffusion", "train", PARAMS) as ctx:
        import time

        import numpy as np
        import torch

        from stages.common.device import limit_threads, select_device
        from stages.common.io import atomic_path, write_json

        from .ddpm import model_config, save_mlflow, train_ddpm

        limit_threads()     # one thread: a 128-wide MLP on batches of 128 gains nothing from a busy second core
        d = np.load(ctx.path(DATA))
        p = ctx.params.train
        device = select_device(ctx.common.device)
        models, summary, timing = {}, {}, {}
        for name in SETS:
            for method in METHODS:
                t0 = time.process_time()
                model, dl, cl = train_ddpm(
                    d[f"{name}_x"], d[f"{name}_y"], T=p.T, hidden=p.hidden, bottleneck=p.bottleneck, proj=p.proj,
                    label_init=p.label_init, class_in_encoder=p.class_in_encoder, steps=p.steps, batch=p.batch, lr=p.lr,
                    coral_weight=p.coral_weight if method == "coral" else 0.0, temperature=p.temperature,
                    time_scale=p.time_scale, seed=ctx.seed, device=device, progress=True, desc=f"{name}-{method}")
                timing[f"{name}_{method}_cpu_s"] = time.process_time() - t0
                models[name, method] = model
                ctx.run.log_curve(f"{name}.{method}.diffusion_loss", dl[::10], steps=range(0, p.steps, 10))
                if cl:
                    ctx.run.log_curve(f"{name}.{method}.supcon_loss", cl[::10], steps=range(0, p.steps, 10))
                tail = max(1, len(dl) // 10)
                summary[f"{name}.{method}.diffusion_loss_last"] = float(np.mean(dl[-tail:]))
                if cl:
                    summary[f"{name}.{method}.supcon_loss_last"] = float(np.mean(cl[-tail:]))
                print(f"  {name}/{method}: diffusion loss {np.mean(dl[:tail]):.4f} -> {np.mean(dl[-tail:]):.4f}"
                      + (f", SupCon {np.mean(cl[:tail]):.3f} -> {np.mean(cl[-tail:]):.3f}" if cl else "")
                      + f"; {timing[f'{name}_{method}_cpu_s']:.1f} CPU s", flush=True)

        config = model_config(p, ctx.params.evaluate.sample_steps)
        for method, rel in (("ddpm", MODEL_DDPM), ("coral", MODEL_CORAL)):
            save_mlflow(ctx.path(rel), models["lt", method], config)
            ctx.run.log_model(ctx.path(rel), f"{method}_long_tailed",
                              params={"coral_weight": p.coral_weight if method == "coral" else 0.0, **config})
        with atomic_path(ctx.path(CONTROL)) as tmp:
            torch.save({"config": config, **{m: models["bal", m].state_dict() for m in METHODS}}, tmp)
        ctx.run.log_metrics({**timing, "steps_per_cpu_s": 4 * p.steps / max(sum(timing.values()), 1e-9)})
        write_json(ctx.path(TRAIN_METRICS), summary)


if __name__ == "__main__":
    main()
