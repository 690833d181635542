"""cdc_gs evaluate: PSNR and SSIM (skimage.metrics) of every fit against its target, the PSNR on
the image's high-frequency pixels, the figures the claims read (per verdict seed), and the plots.

Outputs: reports/cdc_gs/metrics.json (what claims.yaml checks: ``per_seed`` figures beside their
means over the seeds, stages/common/seeds.per_seed_metrics), reports/cdc_gs/results.csv (one row
per seed, image, arm and count), reports/cdc_gs/psnr_vs_count.png and its data
reports/cdc_gs/psnr_vs_count.csv (mean PSNR vs primitive count, one line per arm) and
reports/cdc_gs/grid.png (the first seed, per image: target, complexity map with the loss-map and
CDC primitive centres, the ADC, loss-map and CDC renders).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

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
    """One seed's figures (what the claims read, per seed) from its per-fit rows (image, arm, count,
    psnr, ssim, hf_psnr): means over the images and counts per arm, the gain of CDC over the
    loss-map baseline per count, and the main count's figures per image."""
    import numpy as np

    at = {(r["image"], r["arm"], r["count"]): r for r in rows}
    names = list(dict.fromkeys(r["image"] for r in rows))
    arms = list(dict.fromkeys(r["arm"] for r in rows))

    def mean(arm: str, k: str, cs=counts) -> float:
        return float(np.mean([at[(n, arm, c)][k] for n in names for c in cs]))

    def gains(a: str, b: str, k: str, c: int) -> list[float]:
        return [at[(n, a, c)][k] - at[(n, b, c)][k] for n in names]

    m: dict = {f"mean_{k}": {arm: mean(arm, k) for arm in arms} for k in ("psnr", "ssim", "hf_psnr")}
    m["by_count"] = {str(c): {"psnr": {arm: mean(arm, "psnr", [c]) for arm in arms},
                              "psnr_gain": float(np.mean(gains("cdc", "loss_map", "psnr", c)))} for c in counts}
    m["min_count_psnr_gain"] = min(v["psnr_gain"] for v in m["by_count"].values())
    hf = gains("cdc", "adc", "hf_psnr", main_count)
    m["mean_hf_psnr_gain"] = float(np.mean(hf))
    m["images_cdc_hf_psnr_gt_adc"] = int(sum(g > 0 for g in hf))
    sh = gains("cdc", "cdc_shuffled", "psnr", main_count)
    m["mean_psnr_gain_over_shuffled"] = float(np.mean(sh))
    m["images_cdc_psnr_gt_shuffled"] = int(sum(g > 0 for g in sh))
    m["per_image"] = {n: {f"{k}.{arm}": at[(n, arm, main_count)][k] for arm in arms for k in ("psnr", "ssim", "hf_psnr")}
                      for n in names}
    return m


GRID_ARMS = ("adc", "loss_map", "cdc")          # the renders the grid shows


def draw_grid(path, names, imgs, cmaps, fits, seed: int, count: int, rows_scores: dict) -> None:
    from stages.common.plots import new_figure, save_png

    k, cols = len(names), 2 + len(GRID_ARMS)
    fig, axes = new_figure(k, cols, figsize=(2.3 * cols, 2.4 * k), squeeze=False)
    for i, n in enumerate(names):
        key = f"{seed}|{n}|{{}}|{count}|{{}}"
        axes[i, 0].imshow(imgs[i], cmap="gray", vmin=0, vmax=1)
        axes[i, 0].set_title(f"{n}: target", fontsize=8)
        axes[i, 1].imshow(cmaps[i], cmap="magma", vmin=0, vmax=1)
        for arm, mk, col in (("loss_map", "x", "tab:cyan"), ("cdc", ".", "tab:green")):
            mu = fits[key.format(arm, "mu")]
            axes[i, 1].scatter(mu[:, 0] - 0.5, mu[:, 1] - 0.5, s=3, marker=mk, c=col, linewidths=0.5, label=arm)
        axes[i, 1].set_title("wavelet complexity\nprimitive centres", fontsize=8)
        if i == 0:
            axes[i, 1].legend(fontsize=6, loc="lower right", markerscale=2)
        for j, arm in enumerate(GRID_ARMS, start=2):
            s = rows_scores[(n, arm)]
            axes[i, j].imshow(fits[key.format(arm, "render")], cmap="gray", vmin=0, vmax=1)
            axes[i, j].set_title(f"{arm}, {count} primitives\nPSNR {s['psnr']:.2f} dB, SSIM {s['ssim']:.3f}",
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
        from stages.common.seeds import per_seed_metrics

        from .arms import ARMS, jobs

        data = np.load(ctx.path(IMAGES))
        names, imgs, cmaps = [str(n) for n in data["names"]], data["images"], data["complexity"]
        fits = dict(np.load(ctx.path(FITS)))
        p, e, seeds = ctx.params.train, ctx.params.evaluate, ctx.seeds
        rows = []
        for seed, name, arm, count in jobs(names, p, seeds):
            i = names.index(name)
            key = f"{seed}|{name}|{arm}|{count}|render"
            if key not in fits:
                fail(f"{FITS} has no fit {key}: it was written with other params or seeds; rerun the train stage",
                     code=2)
            rows.append({"seed": seed, "image": name, "arm": arm, "count": count,
                         **score(imgs[i], fits[key], cmaps[i], e.hf_quantile)})
        per_seed = {s: summarise([r for r in rows if r["seed"] == s], p.main_count, p.counts) for s in seeds}
        m = per_seed_metrics(per_seed, n_images=len(names), main_count=p.main_count, counts=list(p.counts))
        write_json(ctx.path(METRICS), m)
        write_csv(ctx.path(RESULTS), rows)
        curve = [{"count": c, "method": arm, "psnr": m["by_count"][str(c)]["psnr"][arm],
                  "ssim": float(np.mean([r["ssim"] for r in rows if r["arm"] == arm and r["count"] == c]))}
                 for arm in ARMS for c in p.counts]
        write_csv(ctx.path(PLOT_DATA), curve)
        fig, ax = new_figure(figsize=(5.5, 3.8))
        for arm, col in zip(ARMS, ("tab:blue", "tab:orange", "tab:red", "tab:gray")):
            for n in names:
                ax.plot(p.counts, [np.mean([r["psnr"] for r in rows if r["image"] == n and r["arm"] == arm
                                            and r["count"] == c]) for c in p.counts], "-", color=col, alpha=0.2, lw=1)
            ax.plot(p.counts, [r["psnr"] for r in curve if r["method"] == arm], "o-", color=col, lw=2,
                    label=f"{arm} (mean of {len(names)} images, {len(seeds)} seeds)")
        ax.set(xlabel="primitives (final count, equal for every arm)", ylabel="PSNR (dB)",
               title="cdc_gs: PSNR vs primitive count (thin: each image)")
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT))
        shown = names[: e.grid_images]
        scores = {(r["image"], r["arm"]): r for r in rows if r["count"] == p.main_count and r["seed"] == seeds[0]}
        draw_grid(ctx.path(GRID), shown, imgs, cmaps, fits, seeds[0], p.main_count, scores)
        for s in seeds:
            g = per_seed[s]["mean_psnr"]
            print(f"  seed {s}: mean PSNR over images and counts " + ", ".join(f"{a} {g[a]:.2f}" for a in ARMS)
                  + f"; CDC - loss_map {g['cdc'] - g['loss_map']:+.2f} dB, shuffled - loss_map "
                  f"{g['cdc_shuffled'] - g['loss_map']:+.2f} dB", flush=True)


if __name__ == "__main__":
    main()
