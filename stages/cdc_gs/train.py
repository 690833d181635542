"""cdc_gs train: every image fitted with 2-D Gaussian splats under both densification policies
(ADC and CDC, stages/cdc_gs/splat.py) at each final count, from the same initialisation (same
seed) for the two methods; optionally CDC with a shuffled complexity map (the ablation).

Outputs: data/cdc_gs/fits.npz (each fit's primitives and render, keys ``image|method|count|attr``),
data/cdc_gs/model (the fits at the main count as an MLflow pyfunc model, logged and registered)
and reports/cdc_gs/train.json (final training loss and count per fit).
"""
from __future__ import annotations

from stages.common.stage import fail, stage

from .params import PARAMS
from .paths import FITS, IMAGES, MODEL, TRAIN_METRICS

METHODS = ("adc", "cdc")
ABLATION = "cdc_shuffled"


def fit_config(p, prep, n_target: int):
    from .splat import FitConfig

    return FitConfig(n_target=n_target, init_fraction=p.init_fraction, steps=p.steps, densify_from=p.densify_from,
                     densify_every=p.densify_every, densify_until=p.densify_until, lr_mu=p.lr_mu,
                     lr_scale=p.lr_scale, lr_theta=p.lr_theta, lr_color=p.lr_color, lr_opacity=p.lr_opacity,
                     clone_max_scale=p.clone_max_scale, min_opacity=p.min_opacity,
                     cdc_densify_fraction=p.cdc_densify_fraction, cdc_prune_fraction=p.cdc_prune_fraction,
                     wavelet=prep.wavelet, wavelet_levels=prep.wavelet_levels)


def jobs(names: list[str], p) -> list[tuple[str, str, int]]:
    """(image, method, count) of every fit, the ablation at the main count only."""
    out = [(n, m, c) for n in names for c in p.counts for m in METHODS]
    if p.ablation:
        out += [(n, ABLATION, p.main_count) for n in names]
    return out


def save_model(target, fits: dict, names: list[str], count: int) -> None:
    """The splats of every image and method at ``count`` as an MLflow pyfunc folder (pyfunc.py)."""
    import tempfile
    from pathlib import Path

    import numpy as np

    from stages.common.mlmodel import save_pyfunc

    keep = {k: v for k, v in fits.items() if k.split("|")[2] == str(count) and not k.endswith("|render")}
    keep = {"|".join(k.split("|")[:2] + k.split("|")[3:]): v for k, v in keep.items()}
    with tempfile.TemporaryDirectory() as scratch:
        art = Path(scratch) / "splats.npz"
        np.savez(art, names=np.array(names), **keep)
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"splats": art})


def main() -> None:
    with stage("cdc_gs", "train", PARAMS) as ctx:
        import time

        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json, write_npz

        from .splat import Fitter

        limit_threads()        # one torch thread: (n x pixels) products this small gain nothing from two
        device = select_device(ctx.common.device)   # CUDA when present (the paper profile), else CPU

        if not ctx.path(IMAGES).exists():
            fail(f"{IMAGES} is missing; run `dvc repro stages/cdc_gs/dvc.yaml:cdc_gs-prepare` first")
        data = np.load(ctx.path(IMAGES))
        names, imgs = [str(n) for n in data["names"]], data["images"]
        p, prep = ctx.params.train, ctx.params.prepare
        todo = jobs(names, p)
        fits, summary = {}, {}
        t0 = time.process_time()
        bar = tqdm(total=len(todo) * p.steps, desc="cdc_gs: fits", mininterval=2, unit="step")
        for name, method, count in todo:
            i, ci = names.index(name), p.counts.index(count)
            f = Fitter(imgs[i], fit_config(p, prep, count), "adc" if method == "adc" else "cdc",
                       seed=ctx.seed * 10_000 + i * 100 + ci,              # the same start for every method
                       complexity="shuffled" if method == ABLATION else "wavelet", device=device)
            losses = f.fit(progress=lambda: bar.update(1))
            key = f"{name}|{method}|{count}"
            for k, v in f.export().items():
                fits[f"{key}|{k}"] = v
            fits[f"{key}|render"] = f.render().detach().cpu().numpy()[..., 0]
            summary[f"{name}/{method}/{count}"] = {"final_loss": losses[-1], "count": f.n,
                            "by_consistency": int(sum(h["by_consistency"] for h in f.history))}
            if count == p.main_count:
                ctx.run.log_curve(f"loss.{name}.{method}", losses[:: max(1, p.steps // 200)])
        bar.close()
        fit_s = time.process_time() - t0
        bad = [k for k, s in summary.items() if s["count"] != int(k.split("/")[2])]
        if bad:
            fail(f"fits ended away from their target count: {bad}", code=1)
        write_npz(ctx.path(FITS), fits)
        save_model(ctx.path(MODEL), fits, names, p.main_count)
        ctx.run.log_model(ctx.path(MODEL), "splats", params={"images": len(names), "count": p.main_count,
                                                             "methods": ",".join(METHODS)})
        write_json(ctx.path(TRAIN_METRICS), {"fits": summary, "steps": p.steps})
        ctx.run.set_tags({"device": str(device)})
        ctx.run.log_metrics({"fit_cpu_s": fit_s, "steps_per_cpu_s": len(todo) * p.steps / max(fit_s, 1e-9)})
        print(f"  {len(todo)} fits x {p.steps} steps in {fit_s:.1f} CPU s "
              f"({len(todo) * p.steps / max(fit_s, 1e-9):.0f} steps/s)", flush=True)


if __name__ == "__main__":
    main()
