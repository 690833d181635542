"""cdc_gs evaluate: PSNR and SSIM (skimage.metrics) of every fit against its target, the PSNR on
the image's high-frequency pixels, the figures the claims read, and the plots.

Outputs: reports/cdc_gs/metrics.json (what claims.yaml checks), reports/cdc_gs/results.csv (one
row per image, method and count), reports/cdc_gs/psnr_vs_count.png and its data
reports/cdc_gs/psnr_vs_count.csv (mean PSNR vs primitive count, one line per method) and
reports/cdc_gs/grid.png (per image: target, complexity map with both methods' primitive centres,
ADC render, CDC render).
"""
from __future__ import annotations

from stages.common.stage import fail, stage

from .params import PARAMS
from .paths import FITS, GRID, IMAGES, METRICS, PLOT, PLOT_DATA, RESULTS


def masked_psnr(target, render, mask) -> float:
    """PSNR (data range 1) over the pixels ``mask``: 10 log10(1 / mean squared error there)."""
    import numpy as np

    if not mask.any():
        raise ValueError("masked_psnr: the mask selects no pixel")
    mse = float(np.mean((np.asarray(target, np.float64)[mask] - np.asarray(render, np.float64)[mask]) ** 2))
    return float("inf") if mse == 0 else 10.0 * np.log10(1.0 / mse)


def score(target, render, cmap, hf_quantile: float) -> dict:
    """psnr, ssim (skimage.metrics, data range 1, the render clipped to [0, 1]) and hf_psnr (PSNR on
    the pixels whose complexity is above its ``hf_quantile`` quantile)."""
    import numpy as np
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    r = np.clip(render, 0.0, 1.0).astype(np.float64)
    t = np.asarray(target, np.float64)
    mask = cmap > np.quantile(cmap, hf_quantile)
    if not mask.any():
        mask = np.ones_like(mask, dtype=bool)
    return {"psnr": float(peak_signal_noise_ratio(t, r, data_range=1.0)),
            "ssim": float(structural_similarity(t, r, data_range=1.0)),
            "hf_psnr": masked_psnr(t, r, mask)}


def summarise(rows: list[dict], main_count: int, counts: list[int]) -> dict:
    """The claims' figures from the per-fit rows."""
    import numpy as np

    at = {(r["image"], r["method"], r["count"]): r for r in rows}
    names = sorted({r["image"] for r in rows}, key=[r["image"] for r in rows].index)
    m: dict = {"n_images": len(names), "main_count": main_count}
    gains = {k: [at[(n, "cdc", main_count)][k] - at[(n, "adc", main_count)][k] for n in names]
             for k in ("psnr", "ssim", "hf_psnr")}
    m["images_cdc_psnr_gt_adc"] = int(sum(g > 0 for g in gains["psnr"]))
    m["images_cdc_ssim_gt_adc"] = int(sum(g > 0 for g in gains["ssim"]))
    m["images_cdc_hf_psnr_gt_adc"] = int(sum(g > 0 for g in gains["hf_psnr"]))
    m["mean_psnr_gain"] = float(np.mean(gains["psnr"]))
    m["mean_ssim_gain"] = float(np.mean(gains["ssim"]))
    m["mean_hf_psnr_gain"] = float(np.mean(gains["hf_psnr"]))
    m["min_psnr_gain"] = float(np.min(gains["psnr"]))
    m["per_image"] = {n: {f"{k}.{meth}": at[(n, meth, main_count)][k] for meth in ("adc", "cdc")
                          for k in ("psnr", "ssim", "hf_psnr")} for n in names}
    per_count = {}
    for c in counts:
        g = [at[(n, "cdc", c)]["psnr"] - at[(n, "adc", c)]["psnr"] for n in names]
        per_count[str(c)] = {"mean_psnr_gain": float(np.mean(g)), "images_cdc_gt_adc": int(sum(x > 0 for x in g))}
    m["by_count"] = per_count
    m["counts_cdc_mean_psnr_gt_adc"] = int(sum(v["mean_psnr_gain"] > 0 for v in per_count.values()))
    m["n_counts"] = len(counts)
    if all((n, "cdc_shuffled", main_count) in at for n in names):
        g = [at[(n, "cdc", main_count)]["psnr"] - at[(n, "cdc_shuffled", main_count)]["psnr"] for n in names]
        m["mean_psnr_gain_over_shuffled"] = float(np.mean(g))
        m["images_cdc_psnr_gt_shuffled"] = int(sum(x > 0 for x in g))
    return m


def draw_grid(path, names, imgs, cmaps, fits, count: int, rows_scores: dict) -> None:
    from stages.common.plots import new_figure, save_png

    k = len(names)
    fig, axes = new_figure(k, 4, figsize=(9, 2.4 * k), squeeze=False)
    for i, n in enumerate(names):
        adc, cdc = fits[f"{n}|adc|{count}|render"], fits[f"{n}|cdc|{count}|render"]
        axes[i, 0].imshow(imgs[i], cmap="gray", vmin=0, vmax=1)
        axes[i, 0].set_title(f"{n}: target", fontsize=8)
        axes[i, 1].imshow(cmaps[i], cmap="magma", vmin=0, vmax=1)
        for meth, mk, col in (("adc", "x", "tab:cyan"), ("cdc", ".", "tab:green")):
            mu = fits[f"{n}|{meth}|{count}|mu"]
            axes[i, 1].scatter(mu[:, 0] - 0.5, mu[:, 1] - 0.5, s=3, marker=mk, c=col, linewidths=0.5, label=meth)
        axes[i, 1].set_title("wavelet complexity\nprimitive centres", fontsize=8)
        if i == 0:
            axes[i, 1].legend(fontsize=6, loc="lower right", markerscale=2)
        for j, (meth, r) in enumerate((("adc", adc), ("cdc", cdc)), start=2):
            s = rows_scores[(n, meth)]
            axes[i, j].imshow(r, cmap="gray", vmin=0, vmax=1)
            axes[i, j].set_title(f"{meth.upper()}, {count} primitives\nPSNR {s['psnr']:.2f} dB, SSIM {s['ssim']:.3f}",
                                 fontsize=8)
        for ax in axes[i]:
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_xlim(-0.5, imgs[i].shape[1] - 0.5)
            ax.set_ylim(imgs[i].shape[0] - 0.5, -0.5)
    save_png(fig, path)


def main() -> None:
    with stage("cdc_gs", "evaluate", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from .train import jobs

        for rel, step in ((IMAGES, "prepare"), (FITS, "train")):
            if not ctx.path(rel).exists():
                fail(f"{rel} is missing; run `dvc repro stages/cdc_gs/dvc.yaml:cdc_gs-{step}` first")
        data = np.load(ctx.path(IMAGES))
        names, imgs, cmaps = [str(n) for n in data["names"]], data["images"], data["complexity"]
        fits = dict(np.load(ctx.path(FITS)))
        p, e = ctx.params.train, ctx.params.evaluate
        rows = []
        for name, method, count in jobs(names, p):
            i = names.index(name)
            key = f"{name}|{method}|{count}|render"
            if key not in fits:
                fail(f"{FITS} has no fit {key}: it was written with other params; rerun the train stage", code=2)
            rows.append({"image": name, "method": method, "count": count,
                         **score(imgs[i], fits[key], cmaps[i], e.hf_quantile)})
        m = summarise(rows, p.main_count, p.counts)
        write_json(ctx.path(METRICS), m)
        write_csv(ctx.path(RESULTS), rows)
        curve = []
        for meth in ("adc", "cdc"):
            for c in p.counts:
                sel = [r for r in rows if r["method"] == meth and r["count"] == c]
                curve.append({"count": c, "method": meth, "psnr": float(np.mean([r["psnr"] for r in sel])),
                              "ssim": float(np.mean([r["ssim"] for r in sel]))})
        write_csv(ctx.path(PLOT_DATA), curve)
        fig, ax = new_figure(figsize=(5.5, 3.8))
        for meth, col in (("adc", "tab:blue"), ("cdc", "tab:red")):
            for n in names:
                ax.plot(p.counts, [next(r["psnr"] for r in rows if r["image"] == n and r["method"] == meth
                                        and r["count"] == c) for c in p.counts], "-", color=col, alpha=0.25, lw=1)
            ax.plot(p.counts, [r["psnr"] for r in curve if r["method"] == meth], "o-", color=col, lw=2,
                    label=f"{meth.upper()} (mean of {len(names)} images)")
        ax.set(xlabel="primitives (final count, equal for both)", ylabel="PSNR (dB)",
               title="cdc_gs: PSNR vs primitive count (thin: each image)")
        ax.legend(fontsize=8)
        save_png(fig, ctx.path(PLOT))
        shown = names[: e.grid_images]
        scores = {(r["image"], r["method"]): r for r in rows if r["count"] == p.main_count}
        draw_grid(ctx.path(GRID), shown, imgs, cmaps, fits, p.main_count, scores)
        for n in names:
            a, c = scores[(n, "adc")], scores[(n, "cdc")]
            print(f"  {n}: PSNR ADC {a['psnr']:.2f} CDC {c['psnr']:.2f} ({c['psnr'] - a['psnr']:+.2f} dB); "
                  f"SSIM {a['ssim']:.3f} -> {c['ssim']:.3f}", flush=True)
        print(f"  CDC > ADC in PSNR on {m['images_cdc_psnr_gt_adc']} of {len(names)} images at n={p.main_count}",
              flush=True)


if __name__ == "__main__":
    main()
