"""mpo prepare: the reference (SFT) policy and every preference-dataset draw.

The reference policy is behaviour-cloned on states of a noisy Pendulum-v1 expert with a share of
random labels. Each draw takes ``pairs`` states from fresh noisy-expert rollouts, two distinct
actions per state from the reference policy, and labels the one nearer the expert's torque as
chosen; the noise settings flip labels at each rate of ``flips`` (nested, same pairs); the mixed
set draws a share of the pairs among the worse half of actions. Validation and test draws use
disjoint seeds.

Outputs: data/mpo/reference.pt (state dict), data/mpo/prefs.npz (every draw) and
reports/mpo/prepare.json (sizes, label accuracy per setting).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, PREPARE_METRICS, REFERENCE


def main() -> None:
    with stage("mpo", "prepare", PARAMS) as ctx:
        import io

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json, write_npz

        from .experiment import build_draws, build_reference, setting_names

        limit_threads()
        p = ctx.params.prepare
        ref = build_reference(p, ctx.seed)
        data = build_draws(p, ref, ctx.seed)
        buf = io.BytesIO()                        # torch.save names its archive after the file: a
        torch.save(ref, buf)                      # temp file's random name would change the bytes
        write_bytes(ctx.path(REFERENCE), buf.getvalue())
        write_npz(ctx.path(DATASET), data)
        acc = {s: float(np.mean([data[k].mean() for k in data if k.startswith(s + "/") and k.endswith("/true")]))
               for s in setting_names(p.flips)}
        write_json(ctx.path(PREPARE_METRICS), {"pairs": p.pairs, "val_draws": p.val_draws,
                                               "test_draws": p.test_draws, "label_accuracy": acc})
        print(f"  label accuracy per setting: {acc}", flush=True)


if __name__ == "__main__":
    main()
