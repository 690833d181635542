"""bitmark evaluate: detection, quality cost, robustness and radioactivity, for every verdict seed
(``ctx.seeds``, one after another in this process) from that seed's models and split.

- The detector's null: z of uniform random bits (mean, sd, tail beyond 4 against the normal's).
- Detection: samples of the clean model without watermark against BitMark samples at each delta of
  the sweep (the same class-balanced labels): z-scores, AUC, TPR at the chosen FPR. The detection
  must's control: the same samples scored by a detector with another key (``detection.auc_wrong_key``).
- Quality: a digit classifier trained on the real training digits (accuracy on the requested
  class, confidence), diversity, and the Fréchet distance to the real test digits in the
  classifier's hidden features; for real test digits, the clean model and every delta.
- The baseline: KGW on whole pixel tokens (16 levels; green half keyed by position and the previous
  pixel), sampled from the same model (``ar.sample_tokens``), at the same delta (``token_kgw``) and
  at ``token_delta_matched``, the delta whose quality cost matches BitMark's at the chosen delta on
  the calibration seeds (``token_matched``: the robustness must's control).
- Robustness at the chosen delta: bit flips, pixel noise and blur applied to both the watermarked
  and the clean samples, then re-encoded and scored: AUC and TPR at the FPR against strength, for
  BitMark and for both token-level arms (scored against the same attacked clean samples).
- Radioactivity: samples (no watermark) of the clean model fine-tuned on the BitMark mix and of the
  control fine-tuned on the unwatermarked mix: their z-scores, and the share of them the detector
  flags at the FPR (threshold: the quantile of the clean model's samples' z).

Outputs: reports/bitmark/metrics.json (``per_seed`` beside the mean over the seeds of every figure),
delta_sweep.{png,csv} and robustness.{png,csv} (means over the seeds), samples.png (first seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import DIGITS, METRICS, ROBUST_DATA, ROBUST_PLOT, SAMPLES_PLOT, SWEEP_DATA, SWEEP_PLOT, WEIGHTS

WRONG_KEY_OFFSET = 1       # the detection control's detector: key + 1, any key but the one that marked


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


def evaluate_seed(seed: int, split, models: dict, p, w, progress: bool = True) -> dict:
    """Every figure of one seed: ``split`` = (train pixels, train labels, test pixels, test labels),
    ``models`` = {"clean", "radioactive", "control"}: AR models. Returns {"metrics", "curves",
    "grid"} (curves: the sweep and robustness rows; grid: the sample rows of the figure)."""
    import warnings

    import numpy as np

    from stages.common.samples import frechet_from_features
    from stages.common.seeds import rng as seed_rng

    from . import ar, quality, wm

    warnings.filterwarnings("ignore", message=".*singular.*")      # sqrtm on rank-deficient ReLU features
    xtr, ytr, xte, yte = split
    table = wm.green_table(w.key, w.ngram)
    wrong = wm.green_table(w.key + WRONG_KEY_OFFSET, w.ngram)
    rng = seed_rng(seed, 3)
    clean_m = models["clean"]

    clf = quality.fit_classifier(xtr, ytr, p.classifier_hidden, seed, p.classifier_iters)
    f_real = quality.features(clf, xte)

    def qual(px, lab) -> dict:
        c = quality.classify(clf, px, lab)
        return {**c, "diversity": quality.diversity(px, lab),
                "frechet": frechet_from_features(f_real, quality.features(clf, px))}

    def say(msg: str) -> None:
        if progress:
            print(f"  seed {seed}: {msg}", flush=True)

    labels = np.arange(p.n_samples) % 10
    clean = ar.sample(clean_m, labels, seed * 1000 + 21)
    z_clean = wm.z_scores(clean, table, w.ngram)
    m = {"null": null_z(p.null_sims, w.ngram, table, rng),
         "real_test": {**qual(xte, yte), "z_mean": float(wm.z_scores(wm.encode(xte), table, w.ngram).mean())},
         "clean": {**qual(wm.decode(clean), labels), "z_mean": float(z_clean.mean()), "z_sd": float(z_clean.std(ddof=1))}}

    sweep, marked = [], {}
    for i, delta in enumerate(p.deltas):
        bits = ar.sample(clean_m, labels, seed * 1000 + 30 + i, table, w.ngram, delta)
        marked[delta] = bits
        z = wm.z_scores(bits, table, w.ngram)
        row = {"delta": delta, "auc": wm.auc(z, z_clean), "tpr_at_fpr": wm.tpr_at_fpr(z, z_clean, p.fpr),
               "z_mean": float(z.mean()), "z_min": float(z.min()), **qual(wm.decode(bits), labels)}
        sweep.append(row)
        say(f"delta {delta}: AUC {row['auc']:.4f}, z {row['z_mean']:.2f}, accuracy {row['accuracy']:.3f}, "
            f"Fréchet {row['frechet']:.2f}")
    m["sweep"] = {f"delta_{key(r['delta'])}": {k: v for k, v in r.items() if k != "delta"} for r in sweep}
    chosen = next(r for r in sweep if r["delta"] == w.delta)
    weakest = sweep[0]
    bits = marked[w.delta]
    zw_wrong, zc_wrong = wm.z_scores(bits, wrong, w.ngram), wm.z_scores(clean, wrong, w.ngram)
    m["detection"] = {"delta": w.delta, "auc": chosen["auc"], "tpr_at_fpr": chosen["tpr_at_fpr"],
                      "z_mean": chosen["z_mean"], "z_min": chosen["z_min"], "fpr": p.fpr,
                      "weakest_delta": weakest["delta"], "weakest_delta_auc": weakest["auc"],
                      "auc_wrong_key": wm.auc(zw_wrong, zc_wrong), "z_mean_wrong_key": float(zw_wrong.mean())}
    m["quality"] = {"accuracy_drop": m["clean"]["accuracy"] - chosen["accuracy"],
                    "frechet_clean": m["clean"]["frechet"], "frechet_watermarked": chosen["frechet"],
                    "frechet_increase": chosen["frechet"] - m["clean"]["frechet"]}

    # the baseline: KGW on whole pixel tokens, at the same delta and at the quality-matched delta
    ttable = wm.token_green_table(w.key)
    zt_clean = wm.token_z_scores(wm.decode(clean), ttable)
    tokens = {}
    for name, delta, s in (("token_kgw", w.delta, 35), ("token_matched", p.token_delta_matched, 36)):
        px = ar.sample_tokens(clean_m, labels, seed * 1000 + s, ttable, delta)
        tokens[name] = px
        zt = wm.token_z_scores(px, ttable)
        m[name] = {"delta": delta, "auc": wm.auc(zt, zt_clean), "tpr_at_fpr": wm.tpr_at_fpr(zt, zt_clean, p.fpr),
                   "z_mean": float(zt.mean()), "clean_z_mean": float(zt_clean.mean()), **qual(px, labels)}
        m[name]["accuracy_drop"] = m["clean"]["accuracy"] - m[name]["accuracy"]
        say(f"token-level KGW at delta {delta:g}: AUC {m[name]['auc']:.4f}, accuracy {m[name]['accuracy']:.3f}, "
            f"Fréchet {m[name]['frechet']:.2f}")

    robust = []
    tok_bits = {name: wm.encode(px) for name, px in tokens.items()}
    rng_tok = {"token_kgw": seed_rng(seed, 4), "token_matched": seed_rng(seed, 6)}    # each arm its own draws
    for kind, strengths in (("bitflip", p.bitflip), ("noise", p.noise), ("blur", p.blur)):
        for s in [0.0] + list(strengths):
            za = wm.z_scores(wm.attack(bits, kind, s, rng) if s else bits, table, w.ngram)
            ca = wm.attack(clean, kind, s, rng) if s else clean
            zc = wm.z_scores(ca, table, w.ngram)
            tc = wm.token_z_scores(wm.decode(ca), ttable)
            row = {"attack": kind, "strength": float(s), "auc": wm.auc(za, zc),
                   "tpr_at_fpr": wm.tpr_at_fpr(za, zc, p.fpr), "z_mean": float(za.mean())}
            for name, prefix in (("token_kgw", "token"), ("token_matched", "token_matched")):
                tb = tok_bits[name]
                ta = wm.token_z_scores(wm.decode(wm.attack(tb, kind, s, rng_tok[name]) if s else tb), ttable)
                row[f"{prefix}_auc"], row[f"{prefix}_tpr_at_fpr"] = wm.auc(ta, tc), wm.tpr_at_fpr(ta, tc, p.fpr)
            robust.append(row)
    attacked = [r for r in robust if r["strength"] > 0]
    name_of = {id(r): f"{r['attack']}_{key(r['strength'])}" for r in attacked}
    m["robustness"] = {name_of[id(r)]: {"auc": r["auc"], "tpr_at_fpr": r["tpr_at_fpr"]} for r in attacked}
    m["robustness_token"] = {name_of[id(r)]: {"auc": r["token_auc"], "tpr_at_fpr": r["token_tpr_at_fpr"]}
                             for r in attacked}
    m["robustness_token_matched"] = {name_of[id(r)]: {"auc": r["token_matched_auc"],
                                                       "tpr_at_fpr": r["token_matched_tpr_at_fpr"]} for r in attacked}
    m["robustness_gap"] = {name_of[id(r)]: r["auc"] - r["token_auc"] for r in attacked}

    outs = {}
    thr = float(np.quantile(z_clean, 1 - p.fpr))
    for name, s in (("radioactive", 41), ("control", 42)):
        b = ar.sample(models[name], labels, seed * 1000 + s)
        outs[name] = b
        z = wm.z_scores(b, table, w.ngram)
        m[name] = {"z_mean": float(z.mean()), "z_sd": float(z.std(ddof=1)), "share_z_above_4": float(np.mean(z > 4)),
                   "tpr_at_fpr": wm.tpr_at_fpr(z, z_clean, p.fpr), "auc_vs_clean": wm.auc(z, z_clean),
                   **qual(wm.decode(b), labels)}
    m["radioactivity"] = {"tpr_at_fpr": m["radioactive"]["tpr_at_fpr"], "control_tpr_at_fpr": m["control"]["tpr_at_fpr"],
                          "z_mean": m["radioactive"]["z_mean"], "control_z_mean": m["control"]["z_mean"],
                          "gap": m["radioactive"]["z_mean"] - m["control"]["z_mean"], "threshold_z": thr}
    say(f"detection AUC {chosen['auc']:.4f} at delta {w.delta:g} (wrong key {m['detection']['auc_wrong_key']:.3f}); "
        f"radioactive: {m['radioactive']['tpr_at_fpr']:.2f} of outputs flagged, z {m['radioactive']['z_mean']:.2f} "
        f"(control {m['control']['tpr_at_fpr']:.2f}, z {m['control']['z_mean']:.2f}); accuracy "
        f"{m['clean']['accuracy']:.3f} -> {chosen['accuracy']:.3f}")

    first = [int(np.flatnonzero(labels == c)[0]) for c in range(10)]
    real_first = [int(np.flatnonzero(yte == c)[0]) for c in range(10)]
    grid = [("real", xte[real_first]), ("clean", wm.decode(clean)[first])]
    grid += [(f"delta {dl:g}", wm.decode(marked[dl])[first]) for dl in p.deltas]
    grid += [(f"token KGW {w.delta:g}", tokens["token_kgw"][first]),
             (f"token KGW {p.token_delta_matched:g}", tokens["token_matched"][first]),
             ("radioactive", wm.decode(outs["radioactive"])[first]), ("control", wm.decode(outs["control"])[first])]
    return {"metrics": m, "sweep": sweep, "robust": robust, "grid": grid}


def mean_rows(per_seed: list[list[dict]], keys: tuple[str, ...]) -> list[dict]:
    """Rows of the seeds' tables (the same rows in the same order) averaged over the seeds on
    ``keys``; the other columns from the first seed."""
    import numpy as np

    out = []
    for rows in zip(*per_seed):
        out.append({**rows[0], **{k: float(np.mean([r[k] for r in rows])) for k in keys}})
    return out


def plots(ctx, sweep: list[dict], robust: list[dict], clean_acc: float, clean_frechet: float, grid, p, w,
          n_seeds: int) -> None:
    """delta_sweep.{csv,png} and robustness.{csv,png} (means over the seeds), samples.png."""
    from stages.common.plots import new_figure, save_png, write_csv

    write_csv(ctx.path(SWEEP_DATA), [{"delta": r["delta"], "auc": r["auc"], "tpr_at_fpr": r["tpr_at_fpr"],
                                      "z_mean": r["z_mean"], "accuracy": r["accuracy"], "frechet": r["frechet"]}
                                     for r in sweep])
    fig, (a1, a2) = new_figure(1, 2, figsize=(9, 3.4))
    ds = [r["delta"] for r in sweep]
    a1.plot(ds, [r["auc"] for r in sweep], "o-", label="AUC")
    a1.plot(ds, [r["tpr_at_fpr"] for r in sweep], "s--", label=f"TPR @ {p.fpr:g} FPR")
    a1.axhline(0.99, color="grey", lw=0.8, ls=":")
    a1.set_xlabel("delta (bias on the green bit's logit)")
    a1.set_title(f"detection: BitMark vs clean (mean of {n_seeds} seeds)")
    a1.legend(fontsize=8)
    a2.plot(ds, [r["accuracy"] for r in sweep], "o-", label="classifier accuracy")
    a2.axhline(clean_acc, color="C0", lw=0.8, ls=":", label="clean model")
    a2b = a2.twinx()
    a2b.plot(ds, [r["frechet"] for r in sweep], "s-", color="C3", label="Fréchet distance")
    a2b.axhline(clean_frechet, color="C3", lw=0.8, ls=":")
    a2.set_xlabel("delta")
    a2.set_ylabel("accuracy")
    a2b.set_ylabel("Fréchet distance to real test digits")
    a2.set_title("quality cost")
    a2.legend(fontsize=8, loc="upper right")
    save_png(fig, ctx.path(SWEEP_PLOT))

    write_csv(ctx.path(ROBUST_DATA), [{k: r[k] for k in ("attack", "strength", "auc", "tpr_at_fpr", "token_auc",
                                                         "token_matched_auc")} for r in robust])
    fig, axes = new_figure(1, 3, figsize=(11, 3.3))
    units = {"bitflip": "flip probability", "noise": "noise sd (levels of 0..15)", "blur": "blur sigma (pixels)"}
    for ax, kind in zip(axes, ("bitflip", "noise", "blur")):
        rows = [r for r in robust if r["attack"] == kind]
        xs = [r["strength"] for r in rows]
        ax.plot(xs, [r["auc"] for r in rows], "o-", label="BitMark AUC")
        ax.plot(xs, [r["tpr_at_fpr"] for r in rows], "s--", label=f"BitMark TPR @ {p.fpr:g} FPR")
        ax.plot(xs, [r["token_auc"] for r in rows], "^-", color="grey", label=f"token KGW AUC (delta {w.delta:g})")
        ax.plot(xs, [r["token_matched_auc"] for r in rows], "v:", color="black",
                label=f"token KGW AUC (delta {p.token_delta_matched:g})")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel(units[kind])
        ax.set_title(f"{kind} (delta {w.delta:g}, mean of {n_seeds} seeds)")
    axes[0].legend(fontsize=7)
    save_png(fig, ctx.path(ROBUST_PLOT))
    sample_grid(grid, ctx.path(SAMPLES_PLOT))


def load_models(folder, seed: int, device=None) -> dict:
    """The train stage's three models of ``seed`` (data/bitmark/weights/<seed>/<arm>.pt)."""
    from pathlib import Path

    from .ar import load_weights

    d = Path(folder) / str(seed)
    if not d.is_dir():
        raise FileNotFoundError(f"bitmark: no models for seed {seed} in {folder}; run "
                                "`dvc repro stages/bitmark/dvc.yaml:bitmark-train` for this profile")
    return {arm: load_weights(d / f"{arm}.pt", device=device)[0] for arm in ("clean", "radioactive", "control")}


def main() -> None:
    with stage("bitmark", "evaluate", PARAMS) as ctx:
        import time

        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .data import seed_split

        limit_threads()
        t_start = time.process_time()
        p, w, seeds = ctx.params.evaluate, ctx.params.watermark, ctx.seeds
        d = dict(np.load(ctx.path(DIGITS)))
        device = select_device(ctx.common.device)

        def one(seed: int) -> dict:
            try:
                split, models = seed_split(d, seed), load_models(ctx.path(WEIGHTS), seed, device)
            except (KeyError, FileNotFoundError) as exc:
                fail(str(exc.args[0]))
            return evaluate_seed(seed, split, models, p, w)

        res = run_seeds(seeds, one, "seed")
        write_json(ctx.path(METRICS), per_seed_metrics({s: r["metrics"] for s, r in res.items()},
                                                       n_samples=p.n_samples, fpr=p.fpr))
        sweep = mean_rows([r["sweep"] for r in res.values()], ("auc", "tpr_at_fpr", "z_mean", "accuracy", "frechet"))
        robust = mean_rows([r["robust"] for r in res.values()], ("auc", "tpr_at_fpr", "token_auc", "token_matched_auc"))
        mean_clean = [res[s]["metrics"]["clean"] for s in seeds]
        plots(ctx, sweep, robust, float(np.mean([c["accuracy"] for c in mean_clean])),
              float(np.mean([c["frechet"] for c in mean_clean])), res[seeds[0]]["grid"], p, w, len(seeds))
        ctx.run.log_metrics({"evaluate_cpu_s": time.process_time() - t_start})


if __name__ == "__main__":
    main()
