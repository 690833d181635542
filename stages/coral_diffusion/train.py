"""coral_diffusion train: for every verdict seed, five class-conditional DDPMs (stages/coral_diffusion/arms.py):
on the long-tailed digits the plain DDPM, DDPM + CORAL and the control (CORAL's term on labels
shuffled over the images), and on the balanced control data the plain DDPM and DDPM + CORAL.

The models of one seed start from the same weights and see the same batches, steps and noise; the
only difference between arms is the contrastive term on the bottleneck (and its labels). Every model
of every seed trains at once, as one stack (ddpm.train_stacked: a leading model dimension, batched
matrix products); each model's numbers are those it gets alone (tested). The first verdict seed's
long-tailed DDPM and CORAL models are saved as MLflow pyfunc models (input example: three of that
seed's held-out labels, with the param seed 0), logged and registered; the whole stack as one file.

Outputs: data/coral_diffusion/models.pt, data/coral_diffusion/model_ddpm, data/coral_diffusion/model_coral
(MLflow model folders) and reports/coral_diffusion/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATA, MODEL_CORAL, MODEL_DDPM, MODELS, TRAIN_METRICS


def main() -> None:
    with stage("coral_diffusion", "train", PARAMS) as ctx:
        import time

        import numpy as np
        import torch
        from tqdm import tqdm

        from stages.common.device import limit_threads, select_device
        from stages.common.io import atomic_path, write_json

        from .arms import jobs_of, key, seed_data, training_jobs
        from .ddpm import build_model, model_config, save_mlflow, train_stacked, unstack_state

        limit_threads()     # one thread: batched products of this size gain little from a busy second core
        p, seeds = ctx.params.train, ctx.seeds
        arrays = np.load(ctx.path(DATA))
        data = {s: seed_data(arrays, s) for s in seeds}
        jobs, names = training_jobs(data, seeds), jobs_of(seeds)
        device = select_device(ctx.common.device)
        t0 = time.process_time()
        with tqdm(total=p.steps, desc=f"coral_diffusion: {len(jobs)} models ({len(seeds)} seeds) in one stack",
                  mininterval=2, unit="step") as bar:
            P, dl, cl = train_stacked(jobs, T=p.T, hidden=p.hidden, bottleneck=p.bottleneck, proj=p.proj,
                                      label_init=p.label_init, class_in_encoder=p.class_in_encoder, steps=p.steps,
                                      batch=p.batch, lr=p.lr, coral_weight=p.coral_weight, temperature=p.temperature,
                                      time_scale=p.time_scale, device=device, progress=bar.update)
        cpu_s = time.process_time() - t0
        tail = max(1, p.steps // 10)
        summary = {}
        for i, (s, name, arm) in enumerate(names):
            row = {"diffusion_loss_first": float(dl[:tail, i].mean()), "diffusion_loss_last": float(dl[-tail:, i].mean())}
            if not np.isnan(cl[:, i]).all():
                row.update(supcon_loss_first=float(cl[:tail, i].mean()), supcon_loss_last=float(cl[-tail:, i].mean()))
            summary[key(s, name, arm).replace("|", "/")] = row
            if s == seeds[0]:
                ctx.run.log_curve(f"{name}.{arm}.diffusion_loss", dl[::10, i].tolist(), steps=range(0, p.steps, 10))
                if "supcon_loss_last" in row:
                    ctx.run.log_curve(f"{name}.{arm}.supcon_loss", cl[::10, i].tolist(), steps=range(0, p.steps, 10))
        for s in seeds:
            print(f"  seed {s}: " + "; ".join(
                f"{name}/{arm} loss {summary[f'{s}/{name}/{arm}']['diffusion_loss_first']:.4f} -> "
                f"{summary[f'{s}/{name}/{arm}']['diffusion_loss_last']:.4f}"
                + (f", SupCon {summary[f'{s}/{name}/{arm}']['supcon_loss_last']:.3f}"
                   if "supcon_loss_last" in summary[f"{s}/{name}/{arm}"] else "")
                for s2, name, arm in names if s2 == s), flush=True)

        config = model_config(p, ctx.params.evaluate.sample_steps)
        with atomic_path(ctx.path(MODELS)) as tmp:
            torch.save({"config": config, "jobs": [list(n) for n in names], "stack": P}, tmp)
        for method, rel in (("ddpm", MODEL_DDPM), ("coral", MODEL_CORAL)):
            model = build_model(p.hidden, p.bottleneck, p.proj, label_init=p.label_init,
                                class_in_encoder=p.class_in_encoder)
            model.load_state_dict(unstack_state(P, names.index((seeds[0], "lt", method))))
            save_mlflow(ctx.path(rel), model.eval(), config, data[seeds[0]]["test_y"][:3])
            ctx.run.log_model(ctx.path(rel), f"{method}_long_tailed",
                              params={"coral_weight": p.coral_weight if method == "coral" else 0.0,
                                      "seed": seeds[0], **config})
        ctx.run.log_metrics({"train_cpu_s": cpu_s, "model_steps_per_cpu_s": len(jobs) * p.steps / max(cpu_s, 1e-9)})
        write_json(ctx.path(TRAIN_METRICS), {"models": summary, "steps": p.steps, "seeds": list(seeds)})
        print(f"  {len(jobs)} models x {p.steps} steps in {cpu_s:.1f} CPU s "
              f"({len(jobs) * p.steps / max(cpu_s, 1e-9):.0f} model-steps/s)", flush=True)


if __name__ == "__main__":
    main()
