"""cdc_gs train: every image fitted with 2-D Gaussian splats by four arms at each final count, on
every verdict seed, from the same initialisation (the same fit seed) for the four arms:

* ``adc``: 3DGS's adaptive density control (prune below opacity 0.005, densify the largest
  accumulated gradients; the study's baseline before the claims contract v2);
* ``loss_map``: the baseline of the must: CDC's machinery (consistency densify/prune, adaptive
  threshold, the same budget) on the loss-driven map (each pixel's squared error at the event)
  instead of the wavelet complexity, so that only the prior differs from CDC;
* ``cdc``: complexity-density consistency on the wavelet complexity (the paper's method);
* ``cdc_shuffled``: CDC on its complexity map shuffled over the pixels (the control: CDC's
  mechanics, no information in the map).

The fits of one image and count (every seed and arm) run in batches of ``fit_batch`` fits in
lockstep (splat.Fitter); each fit's figures are the same as alone (tested).

Outputs: data/cdc_gs/fits.npz (each fit's primitives and render, keys
``seed|image|arm|count|attr``), data/cdc_gs/model (the first verdict seed's ADC and CDC fits at
the main count as an MLflow pyfunc model, logged and registered) and reports/cdc_gs/train.json
(final training loss, count and consistency picks per fit).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .arms import ARMS, jobs
from .params import PARAMS
from .paths import FITS, IMAGES, MODEL, TRAIN_METRICS

METHODS = ("adc", "cdc")                  # the arms the model serves


def fit_config(p, prep, n_target: int):
    from .splat import FitConfig

    return FitConfig(n_target=n_target, init_fraction=p.init_fraction, steps=p.steps, densify_from=p.densify_from,
                     densify_every=p.densify_every, densify_until=p.densify_until, lr_mu=p.lr_mu,
                     lr_scale=p.lr_scale, lr_theta=p.lr_theta, lr_color=p.lr_color, lr_opacity=p.lr_opacity,
                     clone_max_scale=p.clone_max_scale, min_opacity=p.min_opacity,
                     cdc_densify_fraction=p.cdc_densify_fraction, cdc_prune_fraction=p.cdc_prune_fraction,
                     wavelet=prep.wavelet, wavelet_levels=prep.wavelet_levels)


def fit_seed(seed: int, image: int, count_index: int) -> int:
    """The seed of the fits of one verdict (or calibration) seed, image and count: the same start
    for every arm."""
    return seed * 10_000 + image * 100 + count_index


def fit_arms(imgs, prep, p, seeds: list[int], arms: dict | None = None, device="cpu",
             progress=None, overrides: dict | None = None) -> dict[tuple[int, int, str, int], dict]:
    """Every fit of ``arms`` (arm -> (policy, complexity map); default :data:`ARMS`) on every
    image, seed and count of ``p.counts``: {(seed, image index, arm, count): {"export", "render",
    "losses", "by_consistency"}}. The fits of one count and image run in batches of
    ``p.fit_batch``. ``overrides``: FitConfig fields set for every fit (calibration's variants)."""
    import dataclasses

    from .splat import FitJob, Fitter

    arms = ARMS if arms is None else arms
    out = {}
    for ci, count in enumerate(p.counts):
        cfg = dataclasses.replace(fit_config(p, prep, count), **(overrides or {}))
        for i, img in enumerate(imgs):
            todo = [(s, arm) for s in seeds for arm in arms]
            for k in range(0, len(todo), p.fit_batch):
                chunk = todo[k:k + p.fit_batch]
                f = Fitter([FitJob(img, arms[arm][0], fit_seed(s, i, ci), arms[arm][1]) for s, arm in chunk],
                           cfg, device=device)
                losses = f.fit(progress)
                renders = f.render().detach().cpu().numpy()[..., 0]
                for b, (s, arm) in enumerate(chunk):
                    out[(s, i, arm, count)] = {"export": f.export(b), "render": renders[b], "losses": losses[:, b],
                                               "by_consistency": int(sum(h["by_consistency"] for h in f.history[b]))}
    return out


def save_model(target, fits: dict, names: list[str], seed: int, count: int) -> None:
    """The splats of every image and of the arms ``METHODS`` of one seed at ``count`` as an
    MLflow pyfunc folder (pyfunc.py); keys ``image|method|attr``. Its input example, from which
    MLflow infers the signature, asks for the first image under each method."""
    import tempfile
    from pathlib import Path

    import numpy as np
    import pandas as pd

    from stages.common.mlmodel import save_pyfunc

    keep = {}
    for k, v in fits.items():
        s, image, arm, c, attr = k.split("|")
        if s == str(seed) and c == str(count) and arm in METHODS and attr != "render":
            keep[f"{image}|{arm}|{attr}"] = v
    with tempfile.TemporaryDirectory() as scratch:
        art = Path(scratch) / "splats.npz"
        np.savez(art, names=np.array(names), **keep)
        example = pd.DataFrame({"image": [names[0]] * len(METHODS), "method": list(METHODS)})
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"splats": art}, input_example=example)


def main() -> None:
    with stage("cdc_gs", "train", PARAMS) as ctx:
        import time

        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json, write_npz

        limit_threads()        # one torch thread: (n x pixels) products this small gain nothing from two
        device = select_device(ctx.common.device)   # CUDA when present (the paper profile), else CPU

        data = np.load(ctx.path(IMAGES))
        names, imgs = [str(n) for n in data["names"]], data["images"]
        p, prep, seeds = ctx.params.train, ctx.params.prepare, ctx.seeds
        todo = jobs(names, p, seeds)
        t0 = time.process_time()
        bar = tqdm(total=len(todo) * p.steps, desc=f"cdc_gs: fits, seeds {seeds}", mininterval=2, unit="step")
        res = fit_arms(imgs, prep, p, seeds, device=device, progress=bar.update)
        bar.close()
        fit_s = time.process_time() - t0
        fits, summary = {}, {}
        for (s, i, arm, count), r in res.items():
            key = f"{s}|{names[i]}|{arm}|{count}"
            for k, v in r["export"].items():
                fits[f"{key}|{k}"] = v
            fits[f"{key}|render"] = r["render"]
            summary[key.replace("|", "/")] = {"final_loss": float(r["losses"][-1]), "count": len(r["export"]["mu"]),
                                              "by_consistency": r["by_consistency"]}
            if count == p.main_count and s == seeds[0]:
                ctx.run.log_curve(f"loss.{names[i]}.{arm}", r["losses"][:: max(1, p.steps // 200)].tolist())
        bad = [k for k, s in summary.items() if s["count"] != int(k.split("/")[3])]
        if bad:
            fail(f"fits ended away from their target count: {bad}", code=1)
        write_npz(ctx.path(FITS), fits)
        save_model(ctx.path(MODEL), fits, names, seeds[0], p.main_count)
        ctx.run.log_model(ctx.path(MODEL), "splats", params={"images": len(names), "count": p.main_count,
                                                             "seed": seeds[0], "methods": ",".join(METHODS)})
        write_json(ctx.path(TRAIN_METRICS), {"fits": summary, "steps": p.steps, "seeds": list(seeds)})
        ctx.run.set_tags({"device": str(device)})
        ctx.run.log_metrics({"fit_cpu_s": fit_s, "steps_per_cpu_s": len(todo) * p.steps / max(fit_s, 1e-9)})
        print(f"  {len(todo)} fits ({len(seeds)} seeds) x {p.steps} steps in {fit_s:.1f} CPU s "
              f"({len(todo) * p.steps / max(fit_s, 1e-9):.0f} fit-steps/s)", flush=True)


if __name__ == "__main__":
    main()
