"""dyna_rend train: for every verdict seed, every arm's pre-training on the seed's push videos, then
behaviour cloning of the stacking task on its demos.

Within a seed every arm starts from the same random weights and is fine-tuned by the same loop with
the same batches; only the pre-training differs (stages/dyna_rend/nets.py). ``dynarend_blind`` is
DynaRend's objective with every render target taken from another scene (the control). The seeds run
one after another in this process (``run_seeds``; benchmarks/dyna_rend/seeds.py measures it
against one process per seed).
Outputs: data/dyna_rend/weights.pt ({seed: {arm: {"pretrained", "policy"}}} state dicts),
data/dyna_rend/model (the first seed's dynarend policy as an MLflow pyfunc model, logged and
registered) and reports/dyna_rend/train.json (per seed, each loss curve's first and last values).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import CAMERAS, PARAMS
from .paths import MODEL, SCENES, TRAIN_METRICS, WEIGHTS


def train_seed(p, grid, pre, demos, seed: int, device="cpu", progress: bool = True):
    """One seed: ({arm: {"pretrained": state, "policy": state}}, {curve name: losses}) for every arm
    of ``p``. ``pre``/``demos``: views_of dicts of the seed's push videos and demos."""
    from tqdm import tqdm

    from .loops import finetune, new_model, pretrain, stream_seed

    def cpu(sd):
        return {k: v.detach().cpu().clone() for k, v in sd.items()}

    states, curves = {}, {}
    total = sum(p.pretrain_steps for a in p.arms if a != "none") + p.finetune_steps * len(p.arms)
    with tqdm(total=total, desc=f"dyna_rend seed {seed}: pre-train and fine-tune", disable=not progress,
              mininterval=5) as bar:
        for arm in p.arms:
            model = new_model(grid, p.channels, p.cams_in, seed, device)
            curve, _ = pretrain(model, arm, pre, p.cams_in, CAMERAS, p.pretrain_steps if arm != "none" else 0,
                                p.batch, p.lr, p.mask_ratio, p.patch, stream_seed(seed, 1), progress=bar)
            start = cpu(model.state_dict())
            curves[f"{arm}.pretrain"] = curve
            curves[f"{arm}.finetune"] = finetune(model, demos, p.cams_in, p.finetune_steps, p.finetune_batch,
                                                 p.finetune_lr, stream_seed(seed, 2), progress=bar)
            states[arm] = {"pretrained": start, "policy": cpu(model.state_dict())}
    return states, curves


def main() -> None:
    with stage("dyna_rend", "train", PARAMS) as ctx:
        import io
        import time

        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_bytes, write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        limit_threads()        # one thread: the CNNs are a few thousand voxels wide; two cores gain little
        import torch

        from .loops import load_split, views_of
        from .pyfunc_io import example_frame, save_policy
        from .world import Grid

        device = select_device(ctx.common.device)
        p = ctx.params.train
        grid = Grid(*ctx.params.prepare.grid)
        npz = np.load(ctx.path(SCENES))
        t0 = time.process_time()

        def one(seed):
            pre = views_of(load_split(npz, "pretrain", seed), CAMERAS, device)
            demos = views_of(load_split(npz, "demos", seed), CAMERAS, device)
            return train_seed(p, grid, pre, demos, seed, device)

        done = run_seeds(ctx.seeds, one, what="seed")
        cpu_s = time.process_time() - t0
        states = {seed: st for seed, (st, _) in done.items()}
        summary = {}
        for seed, (_, curves) in done.items():
            summary[seed] = {}
            for name, curve in curves.items():
                if curve:
                    ctx.run.log_curve(f"train.s{seed}.{name}_loss", curve)
                    summary[seed][name] = {"loss_first": curve[0], "loss_last50_mean": float(np.mean(curve[-50:]))}
        buf = io.BytesIO()
        torch.save(states, buf)
        write_bytes(ctx.path(WEIGHTS), buf.getvalue())
        first = ctx.seeds[0]
        # its input example: the first three of that seed's demos (the scenes it was fine-tuned on)
        save_policy(ctx.path(MODEL), states[first]["dynarend"]["policy"], grid, p,
                    example_frame(load_split(npz, "demos", first), p.cams_in))
        ctx.run.log_model(ctx.path(MODEL), "dynarend_policy",
                          params={"arm": "dynarend", "seed": first, **p.model_dump()})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(summary, arms=list(p.arms)))
        ctx.run.log_metrics({"train_cpu_s": cpu_s})   # varies run to run: MLflow only, not the metrics file
        for seed in ctx.seeds:
            print(f"  seed {seed}: " + "; ".join(f"{k} {v['loss_first']:.4f} -> {v['loss_last50_mean']:.4f}"
                                                  for k, v in summary[seed].items()), flush=True)
        print(f"  train CPU {cpu_s:.1f} s for {len(ctx.seeds)} seeds", flush=True)


if __name__ == "__main__":
    main()
