"""dyna_rend train: every arm's pre-training, then behaviour cloning on the demos.

Every arm starts from the same random weights (the seed) and is fine-tuned by the same loop with the
same batches; only the pre-training differs (stages/dyna_rend/nets.py). dynarend is also fine-tuned
from its checkpoint at ``control_steps`` (the short pre-training control of the transfer check).
Outputs: data/dyna_rend/weights.pt (every arm's pre-trained and fine-tuned state dicts),
data/dyna_rend/model (the dynarend policy as an MLflow pyfunc model, logged and registered) and
reports/dyna_rend/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import CAMERAS, PARAMS
from .paths import MODEL, SCENES, TRAIN_METRICS, WEIGHTS

SHORT = "dynarend_short"


def train_all(p, grid, pre, demos, seed: int, device, progress: bool = True):
    """{arm: {"pretrained": state, "policy": state}} and the loss curves, for every arm of ``p``
    (plus dynarend_short when dynarend is an arm)."""
    from tqdm import tqdm

    from .loops import finetune, new_model, pretrain

    def cpu(sd):
        return {k: v.detach().cpu().clone() for k, v in sd.items()}

    states, curves = {}, {}
    total = sum(p.pretrain_steps for a in p.arms if a != "none") + p.finetune_steps * (len(p.arms) + 1)
    with tqdm(total=total, desc="dyna_rend: pre-train and fine-tune", disable=not progress, mininterval=2) as bar:
        for arm in p.arms:
            model = new_model(grid, p.channels, p.cams_in, seed, device)
            ck = (p.control_steps,) if arm == "dynarend" else ()
            curve, saved = pretrain(model, arm, pre, p.cams_in, CAMERAS, p.pretrain_steps if arm != "none" else 0,
                                    p.batch, p.lr, p.mask_ratio, p.patch, seed + 1, checkpoints=ck, progress=bar)
            starts = {arm: cpu(model.state_dict())}
            if arm == "dynarend":
                starts[SHORT] = cpu(saved[p.control_steps])
            curves[f"{arm}.pretrain"] = curve
            for name, start in starts.items():
                model = new_model(grid, p.channels, p.cams_in, seed, device)
                model.load_state_dict(start)
                curves[f"{name}.finetune"] = finetune(model, demos, p.cams_in, p.finetune_steps, p.finetune_batch,
                                                      p.finetune_lr, seed + 2, progress=bar)
                states[name] = {"pretrained": start, "policy": cpu(model.state_dict())}
    return states, curves


def main() -> None:
    with stage("dyna_rend", "train", PARAMS) as ctx:
        import io
        import time

        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_bytes, write_json

        limit_threads()        # one thread: the CNNs are a few thousand voxels wide; two cores gain little
        import torch

        from .loops import load_split, views_of
        from .pyfunc_io import save_policy
        from .world import Grid

        device = select_device(ctx.common.device)
        p = ctx.params.train
        grid = Grid(*ctx.params.prepare.grid)
        npz = np.load(ctx.path(SCENES))
        pre = views_of(load_split(npz, "pretrain"), CAMERAS, device)
        demos = views_of(load_split(npz, "demos"), CAMERAS, device)
        t0 = time.process_time()
        states, curves = train_all(p, grid, pre, demos, ctx.seed, device)
        cpu_s = time.process_time() - t0
        for name, curve in curves.items():
            if curve:
                ctx.run.log_curve(f"train.{name}_loss", curve)
        buf = io.BytesIO()
        torch.save(states, buf)
        write_bytes(ctx.path(WEIGHTS), buf.getvalue())
        save_policy(ctx.path(MODEL), states["dynarend"]["policy"], grid, p)
        ctx.run.log_model(ctx.path(MODEL), "dynarend_policy", params={"arm": "dynarend", **p.model_dump()})
        summary = {name: {"loss_first": c[0], "loss_last50_mean": float(np.mean(c[-50:]))}
                   for name, c in curves.items() if c}
        write_json(ctx.path(TRAIN_METRICS), {"arms": list(states), "losses": summary})
        ctx.run.log_metrics({"train_cpu_s": cpu_s})   # varies run to run: MLflow only, not the metrics file
        print("  " + "; ".join(f"{k} {v['loss_first']:.4f} -> {v['loss_last50_mean']:.4f}" for k, v in summary.items())
              + f"; CPU {cpu_s:.1f} s", flush=True)


if __name__ == "__main__":
    main()
