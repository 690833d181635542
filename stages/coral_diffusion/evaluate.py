"""coral_diffusion evaluate: latent overlap and sample quality of every model of every verdict seed, the plots.

For each seed, data set (lt = long-tailed, bal = balanced control) and arm (ddpm, coral, and on lt
the control ``shuffled``; stages/coral_diffusion/arms.py):
* latent overlap: the bottleneck activations of the seed's held-out test images (balanced, true
  labels, noised to t = t_overlap * T with the seed's fixed noise: the authors' encodings use
  t = 0.1 T); the tail-head kNN overlap (measures.knn_overlap); as context the same at the
  ``t_fracs`` levels and the Bhattacharyya pair overlap (measures.pair_overlap);
* samples: ``per_class`` generated images a class (the seed's fixed noise, the same for its
  arms); the seed's real-data classifier's accuracy on them per class; diversity = mean pairwise
  distance of a class's samples over that of its real images (1 = as diverse as the data);
  coverage (Naeem et al.) of the real images of the class; the Fréchet distance to the real images
  of the class in the classifier's hidden-feature space.
Tail figures are means over the tail classes. The claims read the paired differences per seed
(coral - ddpm, and the control's shuffled - ddpm) from ``per_seed`` (stages.common.seeds.per_seed_metrics).
All models are encoded and sampled at once, as one stack (ddpm.sample_stacked, ddpm.bottleneck_stacked).

Outputs: reports/coral_diffusion/metrics.json, per_class.csv, tail_vs_coral.png (+ .csv) and the
first seed's samples grid samples.png.
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .arms import ARMS, SET_NAMES
from .params import PARAMS
from .paths import CLASSIFIER, DATA, GRID, METRICS, MODELS, PLOT, PLOT_DATA, RESULTS

MODELS_PER_CALL = 5         # models sampled at once (one seed's five; a stack of 25 samples slower)
MEASURES = (("tail-head overlap", "overlap"), ("tail accuracy", "tail_accuracy"),
            ("tail diversity", "tail_diversity"), ("tail Fréchet", "tail_frechet"))


def model_figures(feats, gen, d: dict, clf: dict, p) -> tuple[dict, list[dict]]:
    """One model's figures from its bottleneck features ``feats`` (levels, n_test, b) at
    [t_overlap] + t_fracs and its samples ``gen`` (10 * per_class, 64), with its seed's split ``d``
    and classifier ``clf``: (summary, per-class rows)."""
    import numpy as np

    from stages.common.samples import coverage, frechet_from_features, mean_pairwise_distance

    from . import digits
    from .measures import knn_overlap, pair_overlap

    overlaps = [knn_overlap(f, d["test_y"], p.tail, p.head, p.k) for f in feats]
    bhatta = [pair_overlap(f, d["test_y"], p.tail, p.head) for f in feats]
    labels = np.repeat(np.arange(10), p.per_class)
    w = [clf["w1"], clf["w2"]], [clf["b1"], clf["b2"]]
    pred = digits.classifier_predict(*w, gen)
    real_x = np.concatenate([d["pool_x"], d["test_x"]])
    real_y = np.concatenate([d["pool_y"], d["test_y"]])
    rows = []
    for c in range(10):
        g, r = gen[labels == c], real_x[real_y == c]
        rows.append({"class": c, "accuracy": float(np.mean(pred[labels == c] == c)),
                     "diversity": mean_pairwise_distance(g) / mean_pairwise_distance(r),
                     "coverage": coverage(r, g, p.coverage_k),
                     "frechet": frechet_from_features(digits.classifier_features(*w, g), digits.classifier_features(*w, r))})

    def mean_of(key, classes):
        return float(np.mean([rows[c][key] for c in classes]))

    summary = {"overlap": overlaps[0], "overlap_by_t": dict(zip(map(str, p.t_fracs), overlaps[1:])),
               "bhattacharyya": bhatta[0], "bhattacharyya_by_t": dict(zip(map(str, p.t_fracs), bhatta[1:])),
               "tail_accuracy": mean_of("accuracy", p.tail), "head_accuracy": mean_of("accuracy", p.head),
               "all_accuracy": mean_of("accuracy", range(10)),
               "tail_diversity": mean_of("diversity", p.tail), "tail_coverage": mean_of("coverage", p.tail),
               "tail_frechet": mean_of("frechet", p.tail), "head_frechet": mean_of("frechet", p.head)}
    return summary, rows


def differences(a: dict, b: dict) -> dict:
    """What an arm ``b`` changes against the plain DDPM ``a`` (each signed so that > 0 is the paper's
    direction): overlap_drop, tail_accuracy_gain, tail_frechet_drop, tail_diversity_gain."""
    return {"overlap_drop": a["overlap"] - b["overlap"], "tail_accuracy_gain": b["tail_accuracy"] - a["tail_accuracy"],
            "tail_frechet_drop": a["tail_frechet"] - b["tail_frechet"],
            "tail_diversity_gain": b["tail_diversity"] - a["tail_diversity"]}


def seed_figures(models: dict) -> dict:
    """One seed's figures from its models' summaries (``(set, arm) -> summary``): per data set each
    arm's summary, CORAL's differences to the plain DDPM, the control's (``shuffled_<name>``, long-
    tailed data), and the balanced-control comparisons."""
    out = {}
    for name, arms in ARMS.items():
        out[name] = {arm: models[name, arm] for arm in arms}
        out[name].update(differences(models[name, "ddpm"], models[name, "coral"]))
        if "shuffled" in arms:
            out[name].update({f"shuffled_{k}": v for k, v in
                              differences(models[name, "ddpm"], models[name, "shuffled"]).items()})
    lt, bal = out["lt"], out["bal"]
    out["imbalance_overlap_excess"] = lt["ddpm"]["overlap"] - bal["ddpm"]["overlap"]
    out["control_overlap_drop_shrink"] = lt["overlap_drop"] - bal["overlap_drop"]
    out["control_accuracy_gain_shrink"] = lt["tail_accuracy_gain"] - bal["tail_accuracy_gain"]
    return out


def evaluate_stack(P: dict, names: list, data: dict, clfs: dict, p, config: dict, device="cpu", progress=None):
    """Every model of the stack ``P`` (``names``: its (seed, set, arm) in order; ``data``/``clfs``:
    seed -> split / classifier weights): ({seed: :func:`seed_figures`}, per-class rows, {(seed, set,
    arm): samples}). Encodings and samples use each seed's own noise streams (arms.noise_seed)."""
    import numpy as np

    from .arms import noise_seed
    from .ddpm import bottleneck_stacked, sample_stacked

    seeds = [s for s, _, _ in names]
    T, cie = config["T"], config["class_in_encoder"]
    feats = bottleneck_stacked(P, np.stack([data[s]["test_x"] for s in seeds]),
                               np.stack([data[s]["test_y"] for s in seeds]), [p.t_overlap] + list(p.t_fracs),
                               [noise_seed(s, 1) for s in seeds], T=T, class_in_encoder=cie)
    labels = np.repeat(np.arange(10), p.per_class)
    gens = sample_stacked(P, labels, [noise_seed(s, 2) for s in seeds], T=T, sample_steps=p.sample_steps,
                          class_in_encoder=cie, device=device, progress=progress, models_per_call=MODELS_PER_CALL)
    by_seed, table, samples = {}, [], {}
    for i, (s, name, arm) in enumerate(names):
        summary, rows = model_figures(feats[i], gens[i], data[s], clfs[s], p)
        by_seed.setdefault(s, {})[name, arm] = summary
        table += [{"seed": s, "data": name, "method": arm, **r} for r in rows]
        samples[s, name, arm] = gens[i]
    return {s: seed_figures(m) for s, m in by_seed.items()}, table, samples


def sample_grid(path, gens: dict, per_class: int, n_show: int, seed: int) -> None:
    """One panel per (data set, arm) of one seed: a row per class, ``n_show`` samples a row."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    fig, axes = new_figure(1, len(gens), figsize=(3.2 * len(gens), 3.6))
    for ax, ((name, method), gen) in zip(np.atleast_1d(axes), gens.items()):
        rows = [np.concatenate([gen[c * per_class + i].reshape(8, 8) for i in range(n_show)], axis=1)
                for c in range(10)]
        ax.imshow((np.concatenate(rows, axis=0) + 1) / 2, cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
        ax.set_title(f"{SET_NAMES[name]}\n{method} (seed {seed})", fontsize=9)
        ax.set_yticks([8 * c + 3.5 for c in range(10)], [str(c) for c in range(10)], fontsize=7)
        ax.set_xticks([])
    save_png(fig, path)


def plot_measures(results: dict, path, p) -> list[dict]:
    """Per measure, each (data set, arm): the mean over the seeds (bar) and each seed's figure
    (dots). Returns the plot's rows (mean over the seeds) for DVC."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    seeds = list(results)
    cases = [(name, arm) for name, arms in ARMS.items() for arm in arms]
    rows = []
    fig, axes = new_figure(1, len(MEASURES), figsize=(4 * len(MEASURES), 3.6))
    for ax, (label, key) in zip(axes, MEASURES):
        for j, (name, arm) in enumerate(cases):
            v = np.array([results[s][name][arm][key] for s in seeds])
            ax.bar(j, v.mean(), 0.7, color=f"C{('ddpm', 'coral', 'shuffled').index(arm)}",
                   label=arm if name == "lt" else None, alpha=0.8)
            ax.plot(np.full(len(v), j), v, "k.", ms=4)
            rows.append({"case": f"{label}, {SET_NAMES[name]}", "method": arm, "value": float(v.mean())})
        ax.set_xticks(range(len(cases)), [f"{'LT' if n == 'lt' else 'bal'}\n{a}" for n, a in cases], fontsize=7)
        ax.set_title(label, fontsize=10)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"coral_diffusion: tail classes {p.tail} vs head {p.head}; bars: mean over seeds {seeds}, "
                 "dots: each seed", fontsize=10)
    save_png(fig, path)
    return rows


def main() -> None:
    with stage("coral_diffusion", "evaluate", PARAMS) as ctx:
        import numpy as np
        import torch
        from tqdm import tqdm

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json
        from stages.common.plots import write_csv
        from stages.common.seeds import per_seed_metrics

        from .arms import seed_data

        limit_threads()
        p, seeds = ctx.params.evaluate, ctx.seeds
        arrays, clf_arrays = np.load(ctx.path(DATA)), np.load(ctx.path(CLASSIFIER))
        saved = torch.load(ctx.path(MODELS), weights_only=True)
        names = [tuple(n) for n in saved["jobs"]]
        if sorted({s for s, _, _ in names}) != sorted(seeds):
            fail(f"{MODELS} holds the seeds {sorted({s for s, _, _ in names})}, the profile's verdict seeds are "
                 f"{seeds}: run `dvc repro stages/coral_diffusion/dvc.yaml:coral_diffusion-train`")
        try:
            data = {s: seed_data(arrays, s) for s in seeds}
            clfs = {s: seed_data(clf_arrays, s) for s in seeds}
        except KeyError as err:
            fail(f"{DATA}: {err}: run `dvc repro stages/coral_diffusion/dvc.yaml:coral_diffusion-prepare`")
        config = saved["config"]
        steps = config["T"] if p.sample_steps == config["T"] else len(
            np.unique(np.linspace(0, config["T"] - 1, p.sample_steps).round()))
        steps *= -(-len(names) // MODELS_PER_CALL)
        with tqdm(total=steps, desc=f"coral_diffusion: sampling {len(names)} models x {10 * p.per_class} images",
                  mininterval=2, unit="step") as bar:
            results, table, samples = evaluate_stack(saved["stack"], names, data, clfs, p, config,
                                                     device=select_device(ctx.common.device), progress=bar.update)
        metrics = per_seed_metrics(results, tail_classes=p.tail, head_classes=p.head)
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(RESULTS), table)
        write_csv(ctx.path(PLOT_DATA), plot_measures(results, ctx.path(PLOT), p))
        first = seeds[0]
        sample_grid(ctx.path(GRID), {(n, a): samples[first, n, a] for s, n, a in names if s == first},
                    p.per_class, min(10, p.per_class), first)
        for s in seeds:
            r = results[s]
            print(f"  seed {s}: " + "; ".join(
                f"{name}/{arm} overlap {r[name][arm]['overlap']:.3f} tail acc {r[name][arm]['tail_accuracy']:.3f}"
                for name, arms in ARMS.items() for arm in arms), flush=True)
            print(f"    CORAL - DDPM (long-tailed): overlap drop {r['lt']['overlap_drop']:+.3f}, tail accuracy "
                  f"{r['lt']['tail_accuracy_gain']:+.3f}; control (shuffled - DDPM): overlap drop "
                  f"{r['lt']['shuffled_overlap_drop']:+.3f}, tail accuracy {r['lt']['shuffled_tail_accuracy_gain']:+.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
