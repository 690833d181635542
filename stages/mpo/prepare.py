"""mpo prepare: the reference (SFT) policy and every preference-dataset draw.

The reference policy is behaviour-cloned on states of a noisy Pendulum-v1 expert with a share of
random labels. Each draw takes ``pairs`` states from fresh noisy-expert rollouts, two distinct
actions per state from the reference policy, and labels the one nearer the expert's torque as
chosen; the noise settings flip labels at each rate of ``flips`` (nested, same pairs); the mixed
set draws a share of the pairs among the worse half of actions. Validation and test draws use
disjoint seeds. Every verdict seed (``ctx.seeds``) gets its own reference policy and draws.

Outputs: data/mpo/reference.pt (state dict per seed), data/mpo/prefs.npz (every draw, keys
``{seed}/{setting}/{split}{k}/...``) and reports/mpo/prepare.json (sizes, label accuracy per
setting, per seed).
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

        from stages.common.seeds import per_seed_metrics, run_seeds

        from .experiment import build_draws, build_reference, setting_names

        limit_threads()
        p = ctx.params.prepare

        def one(seed: int):
            ref = build_reference(p, seed)
            return ref, build_draws(p, ref, seed)
        made = run_seeds(ctx.seeds, one, "prepare seed")
        data = {f"{seed}/{k}": v for seed, (_, d) in made.items() for k, v in d.items()}
        buf = io.BytesIO()                        # torch.save names its archive after the file: a
        torch.save({str(seed): ref for seed, (ref, _) in made.items()}, buf)   # temp file's name would change the bytes
        write_bytes(ctx.path(REFERENCE), buf.getvalue())
        write_npz(ctx.path(DATASET), data)
        acc = {seed: {"label_accuracy": {s: float(np.mean([d[k].mean() for k in d if k.startswith(s + "/")
                                                          and k.endswith("/true")]))
                                         for s in setting_names(p.flips)}}
               for seed, (_, d) in made.items()}
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(acc, pairs=p.pairs, val_draws=p.val_draws,
                                                               test_draws=p.test_draws))
        print(f"  label accuracy per setting (mean over seeds): "
              f"{ {s: round(float(np.mean([a['label_accuracy'][s] for a in acc.values()])), 3) for s in setting_names(p.flips)} }",
              flush=True)

if __name__ == "__main__":
    main()
