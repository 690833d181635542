"""jsp_multipolicy train: the single self-labelled policy (SLIM, K = 1) and the multi-policy
network (K = train.n_policies, adaptive imitation intensity), on the same stream of random
training shops, the same steps and the same samples per shop.

Outputs: data/jsp_multipolicy/models.pt (both state dicts and their sizes) and
reports/jsp_multipolicy/train.json (CPU time, steps/s, last losses and training makespans).
"""
from __future__ import annotations

from stages.common.stage import stage

from .params import PARAMS
from .paths import MODELS, TRAIN_METRICS


def main() -> None:
    with stage("jsp_multipolicy", "train", PARAMS) as ctx:
        import io
        import time

        import torch
        from tqdm import tqdm

        from stages.common.io import write_bytes, write_json

        from .policy import train_policy

        torch.set_num_threads(1)
        t = ctx.params.train
        kw = t.model_dump(exclude={"n_policies", "tau"})
        out, metrics = {}, {}
        for name, K, tau in (("single", 1, 1.0), ("multi", t.n_policies, t.tau)):
            c0 = time.process_time()
            with tqdm(total=t.steps, desc=f"train {name}", mininterval=2) as bar:
                net, hist = train_policy(K, tau=tau, seed=ctx.seed, kind="jssp", progress=bar, **kw)
            cpu = time.process_time() - c0
            out[name] = {"state": net.state_dict(), "n_policies": K, "hidden": t.hidden}
            for key in ("loss", "best_makespan", "weight_mean"):
                ctx.run.log_curve(f"{name}.{key}", [h[key] for h in hist], [h["step"] for h in hist])
            metrics[name] = {"cpu_s": cpu, "steps_per_s": t.steps / cpu, "last_loss": hist[-1]["loss"],
                             "train_best_makespan_first": hist[0]["best_makespan"],
                             "train_best_makespan_last": hist[-1]["best_makespan"]}
            print(f"  {name}: {cpu:.1f} s CPU, {t.steps / cpu:.1f} steps/s", flush=True)
        buf = io.BytesIO()              # not the temp file: torch.save names the archive after the file,
        torch.save(out, buf)            # and a random temp name would make the bytes differ run to run
        write_bytes(ctx.path(MODELS), buf.getvalue())
        write_json(ctx.path(TRAIN_METRICS), metrics)


if __name__ == "__main__":
    main()
