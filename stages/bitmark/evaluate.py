"""bitmark evaluate: detection, quality cost, robustness and radioactivity.

- The detector's null: z of uniform random bits (mean, sd, tail beyond 4 against the normal's).
- Detection: samples of the clean model without watermark against BitMark samples at each delta of
  the sweep (the same class-balanced labels): z-scores, AUC, TPR at the chosen FPR.
- Quality: a digit classifier trained on the real training digits (accuracy on the requested
  class, confidence), diversity, and the Fréchet distance to the real test digits in the
  classifier's hidden features; for real test digits, the clean model and every delta.
- The baseline: KGW on whole pixel tokens (16 levels; green half keyed by position and the previous
  pixel) at the same delta, sampled from the same model (``ar.sample_tokens``).
- Robustness at the chosen delta: bit flips, pixel noise and blur applied to both the watermarked
  and the clean samples, then re-encoded and scored: AUC and TPR at the FPR against strength, for
  BitMark and for the token-level baseline.
- Radioactivity: samples (no watermark) of the model trained on watermarked samples and of the
  control trained on clean samples: their z-scores.

Outputs: reports/bitmark/metrics.json, delta_sweep.{png,csv}, robustness.{png,csv}, samples.png.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import (DIGITS, METRICS, MODEL_CLEAN, MODEL_CONTROL, MODEL_RADIO, ROBUST_DATA, ROBUST_PLOT,
                    SAMPLES_PLOT, SWEEP_DATA, SWEEP_PLOT)


def load_ar(folder, device=None):
    """The torch model inside a pyfunc folder saved by the train stage."""
    from pathlib import Path

    from .ar import load_weights

    art = Path(folder) / "artifacts"
    return load_weights(art / "weights.pt", art / "weights.pt.json", device)[0]


def null_z(n_rows: int, ngram: int, table, rng) -> dict:
    """The detector on uniform random bits: its green count is Binomial(T, 1/2) whatever the key,
    so z has mean 0, sd 1 and the binomial's tail (z lives on a lattice of step 2 / sqrt(T))."""
    import numpy as np
    from scipy import stats

    from .wm import GAMMA, N_BITS, z_scores

    z = z_scores(rng.integers(0, 2, size=(n_rows, N_BITS)), table, ngram)
    c2 = GAMMA * N_BITS + 2 * np.sqrt(N_BITS * GAMMA * (1 - GAMMA))          # the count at z = 2
    return {"z_mean": float(z.mean()), "z_sd": float(z.std(ddof=1)), "share_above_2": float(np.mean(z > 2)),
            "binomial_share_above_2": float(stats.binom.sf(np.floor(c2), N_BITS, GAMMA)),
            "normal_share_above_2": float(stats.norm.sf(2)), "share_above_4": float(np.mean(z > 4))}


def key(x: float) -> str:
    """A number as a metrics key without a dot (the ledger reads dotted paths): 0.5 -> 0p5."""
    return f"{x:g}".replace(".", "p")


def sample_grid(rows: list[tuple[str, object]], path) -> None:
    """One row of 10 digits (classes 0..9) per condition."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    fig, axes = new_figure(len(rows), 10, figsize=(10 * 0.75, len(rows) * 0.8))
    for r, (name, px) in enumerate(rows):
        for c in range(10):
            ax = axes[r, c]
            ax.imshow(np.asarray(px[c]).reshape(8, 8), cmap="gray_r", vmin=0, vmax=15, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if c == 0:
                ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=8)
    fig.suptitle("bitmark: samples (columns: digits 0-9)", fontsize=9)
    save_png(fig, path)


def main() -> None:
    with stage("bitmark", "evaluate", PARAMS) as ctx:
        import time
        import warnings

        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.samples import frechet_from_features

        from . import ar, quality, wm

        limit_threads()
        warnings.filterwarnings("ignore", message=".*singular.*")      # sqrtm on rank-deficient ReLU features
        t_start = time.process_time()
        p, w = ctx.params.evaluate, ctx.params.watermark
        d = np.load(ctx.path(DIGITS))
        xtr, ytr = d["train_pixels"].astype(np.int64), d["train_labels"].astype(np.int64)
        xte, yte = d["test_pixels"].astype(np.int64), d["test_labels"].astype(np.int64)
        table = wm.green_table(w.key, w.ngram)
        rng = np.random.default_rng([ctx.seed, 3])
        device = select_device(ctx.common.device)
        clean_m, radio_m, control_m = (load_ar(ctx.path(f), device) for f in (MODEL_CLEAN, MODEL_RADIO, MODEL_CONTROL))

        clf = quality.fit_classifier(xtr, ytr, p.classifier_hidden, ctx.seed)
        f_real = quality.features(clf, xte)

        def qual(px, lab) -> dict:
            c = quality.classify(clf, px, lab)
            return {**c, "diversity": quality.diversity(px, lab),
                    "frechet": frechet_from_features(f_real, quality.features(clf, px))}

        labels = np.arange(p.n_samples) % 10
        clean = ar.sample(clean_m, labels, ctx.seed * 1000 + 21)
        z_clean = wm.z_scores(clean, table, w.ngram)
        m = {"null": null_z(p.null_sims, w.ngram, table, rng),
             "real_test": {**qual(xte, yte), "z_mean": float(wm.z_scores(wm.encode(xte), table, w.ngram).mean())},
             "clean": {**qual(wm.decode(clean), labels), "z_mean": float(z_clean.mean()), "z_sd": float(z_clean.std(ddof=1))}}

        sweep, marked = [], {}
        for i, delta in enumerate(p.deltas):
            bits = ar.sample(clean_m, labels, ctx.seed * 1000 + 30 + i, table, w.ngram, delta)
            marked[delta] = bits
            z = wm.z_scores(bits, table, w.ngram)
            row = {"delta": delta, "auc": wm.auc(z, z_clean), "tpr_at_fpr": wm.tpr_at_fpr(z, z_clean, p.fpr),
                   "z_mean": float(z.mean()), "z_min": float(z.min()), **qual(wm.decode(bits), labels)}
            sweep.append(row)
            print(f"  delta {delta}: AUC {row['auc']:.4f}, z {row['z_mean']:.2f}, accuracy {row['accuracy']:.3f}, "
                  f"Fréchet {row['frechet']:.2f}", flush=True)
        m["sweep"] = {f"delta_{key(r['delta'])}": {k: v for k, v in r.items() if k != "delta"} for r in sweep}
        chosen = next(r for r in sweep if r["delta"] == w.delta)
        weakest = sweep[0]
        m["detection"] = {"delta": w.delta, "auc": chosen["auc"], "tpr_at_fpr": chosen["tpr_at_fpr"],
                          "z_mean": chosen["z_mean"], "z_min": chosen["z_min"], "fpr": p.fpr,
                          "weakest_delta": weakest["delta"], "weakest_delta_auc": weakest["auc"]}
        m["quality"] = {"accuracy_drop": m["clean"]["accuracy"] - chosen["accuracy"],
                        "frechet_clean": m["clean"]["frechet"], "frechet_watermarked": chosen["frechet"],
                        "frechet_increase": chosen["frechet"] - m["clean"]["frechet"]}

        # the baseline: KGW on whole pixel tokens at the same delta (the paper's token-level comparison)
        ttable = wm.token_green_table(w.key)
        tok_px = ar.sample_tokens(clean_m, labels, ctx.seed * 1000 + 35, ttable, w.delta)
        zt, zt_clean = wm.token_z_scores(tok_px, ttable), wm.token_z_scores(wm.decode(clean), ttable)
        m["token_kgw"] = {"delta": w.delta, "auc": wm.auc(zt, zt_clean), "tpr_at_fpr": wm.tpr_at_fpr(zt, zt_clean, p.fpr),
                          "z_mean": float(zt.mean()), "clean_z_mean": float(zt_clean.mean()), **qual(tok_px, labels)}
        print(f"  token-level KGW at delta {w.delta:g}: AUC {m['token_kgw']['auc']:.4f}, accuracy "
              f"{m['token_kgw']['accuracy']:.3f}, Fréchet {m['token_kgw']['frechet']:.2f}", flush=True)

        robust, bits, tok_bits = [], marked[w.delta], wm.encode(tok_px)
        rng_tok = np.random.default_rng([ctx.seed, 4])
        for kind, strengths in (("bitflip", p.bitflip), ("noise", p.noise), ("blur", p.blur)):
            for s in [0.0] + list(strengths):
                za = wm.z_scores(wm.attack(bits, kind, s, rng) if s else bits, table, w.ngram)
                ca = wm.attack(clean, kind, s, rng) if s else clean
                zc = wm.z_scores(ca, table, w.ngram)
                ta = wm.token_z_scores(wm.decode(wm.attack(tok_bits, kind, s, rng_tok) if s else tok_bits), ttable)
                tc = wm.token_z_scores(wm.decode(ca), ttable)
                robust.append({"attack": kind, "strength": float(s), "auc": wm.auc(za, zc),
                               "tpr_at_fpr": wm.tpr_at_fpr(za, zc, p.fpr), "z_mean": float(za.mean()),
                               "token_auc": wm.auc(ta, tc), "token_tpr_at_fpr": wm.tpr_at_fpr(ta, tc, p.fpr)})
        m["robustness"] = {f"{r['attack']}_{key(r['strength'])}": {"auc": r["auc"], "tpr_at_fpr": r["tpr_at_fpr"]}
                           for r in robust if r["strength"] > 0}
        m["robustness_token"] = {f"{r['attack']}_{key(r['strength'])}": {"auc": r["token_auc"],
                                                                          "tpr_at_fpr": r["token_tpr_at_fpr"]}
                                 for r in robust if r["strength"] > 0}
        m["robustness_gap"] = {f"{r['attack']}_{key(r['strength'])}": r["auc"] - r["token_auc"]
                               for r in robust if r["strength"] > 0}

        outs = {}
        for name, model, seed in (("radioactive", radio_m, 41), ("control", control_m, 42)):
            b = ar.sample(model, labels, ctx.seed * 1000 + seed)
            outs[name] = b
            z = wm.z_scores(b, table, w.ngram)
            m[name] = {"z_mean": float(z.mean()), "z_sd": float(z.std(ddof=1)), "share_z_above_4": float(np.mean(z > 4)),
                       "auc_vs_clean": wm.auc(z, z_clean), **qual(wm.decode(b), labels)}
        m["radioactivity"] = {"z_mean": m["radioactive"]["z_mean"], "control_z_mean": m["control"]["z_mean"],
                              "gap": m["radioactive"]["z_mean"] - m["control"]["z_mean"]}
        m["n_samples"] = p.n_samples
        write_json(ctx.path(METRICS), m)

        # the delta sweep: detection and quality against delta
        write_csv(ctx.path(SWEEP_DATA), [{"delta": r["delta"], "auc": r["auc"], "tpr_at_fpr": r["tpr_at_fpr"],
                                          "z_mean": r["z_mean"], "accuracy": r["accuracy"], "frechet": r["frechet"]}
                                         for r in sweep])
        fig, (a1, a2) = new_figure(1, 2, figsize=(9, 3.4))
        ds = [r["delta"] for r in sweep]
        a1.plot(ds, [r["auc"] for r in sweep], "o-", label="AUC")
        a1.plot(ds, [r["tpr_at_fpr"] for r in sweep], "s--", label=f"TPR @ {p.fpr:g} FPR")
        a1.axhline(0.99, color="grey", lw=0.8, ls=":")
        a1.set_xlabel("delta (bias on the green bit's logit)")
        a1.set_title("detection: BitMark vs clean samples")
        a1.legend(fontsize=8)
        a2.plot(ds, [r["accuracy"] for r in sweep], "o-", label="classifier accuracy")
        a2.axhline(m["clean"]["accuracy"], color="C0", lw=0.8, ls=":", label="clean model")
        a2b = a2.twinx()
        a2b.plot(ds, [r["frechet"] for r in sweep], "s-", color="C3", label="Fréchet distance")
        a2b.axhline(m["clean"]["frechet"], color="C3", lw=0.8, ls=":")
        a2.set_xlabel("delta")
        a2.set_ylabel("accuracy")
        a2b.set_ylabel("Fréchet distance to real test digits")
        a2.set_title("quality cost")
        a2.legend(fontsize=8, loc="upper right")
        save_png(fig, ctx.path(SWEEP_PLOT))

        # robustness: AUC and TPR against attack strength
        write_csv(ctx.path(ROBUST_DATA), [{k: r[k] for k in ("attack", "strength", "auc", "tpr_at_fpr", "token_auc")}
                                          for r in robust])
        fig, axes = new_figure(1, 3, figsize=(11, 3.3))
        units = {"bitflip": "flip probability", "noise": "noise sd (levels of 0..15)", "blur": "blur sigma (pixels)"}
        for ax, kind in zip(axes, ("bitflip", "noise", "blur")):
            rows = [r for r in robust if r["attack"] == kind]
            ax.plot([r["strength"] for r in rows], [r["auc"] for r in rows], "o-", label="BitMark AUC")
            ax.plot([r["strength"] for r in rows], [r["tpr_at_fpr"] for r in rows], "s--", label=f"BitMark TPR @ {p.fpr:g} FPR")
            ax.plot([r["strength"] for r in rows], [r["token_auc"] for r in rows], "^-", color="grey",
                    label="token-level KGW AUC")
            ax.set_ylim(-0.02, 1.02)
            ax.set_xlabel(units[kind])
            ax.set_title(f"{kind} (delta {w.delta:g})")
        axes[0].legend(fontsize=8)
        save_png(fig, ctx.path(ROBUST_PLOT))

        first = [int(np.flatnonzero(labels == c)[0]) for c in range(10)]
        real_first = [int(np.flatnonzero(yte == c)[0]) for c in range(10)]
        rows = [("real", xte[real_first]), ("clean", wm.decode(clean)[first])]
        rows += [(f"delta {dl:g}", wm.decode(marked[dl])[first]) for dl in p.deltas]
        rows += [("token KGW", tok_px[first]), ("radioactive", wm.decode(outs["radioactive"])[first]),
                 ("control", wm.decode(outs["control"])[first])]
        sample_grid(rows, ctx.path(SAMPLES_PLOT))
        ctx.run.log_metrics({"evaluate_cpu_s": time.process_time() - t_start})
        print(f"  detection AUC {chosen['auc']:.4f} at delta {w.delta:g} ({weakest['auc']:.3f} at {weakest['delta']:g}); "
              f"radioactive z {m['radioactive']['z_mean']:.2f} vs control {m['control']['z_mean']:.2f}; "
              f"accuracy {m['clean']['accuracy']:.3f} -> {chosen['accuracy']:.3f}", flush=True)


if __name__ == "__main__":
    main()
