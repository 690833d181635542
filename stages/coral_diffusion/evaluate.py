"""coral_diffusion evaluate: latent overlap and sample quality of the four models, the plots.

For each data set (lt = long-tailed, bal = balanced control) and model (ddpm, coral):
* latent overlap: the bottleneck activations of the held-out test images (balanced, true labels,
  noised to t = t_overlap * T with fixed noise: the authors' encodings use t = 0.1 T); the tail-head
  kNN overlap (measures.knn_overlap); as context the same at the ``t_fracs`` levels and the
  Bhattacharyya pair overlap (measures.pair_overlap);
* samples: ``per_class`` generated images a class (DDIM, fixed noise seed); the real-data
  classifier's accuracy on them per class; diversity = mean pairwise distance of a class's samples
  over that of its real images (1 = as diverse as the data); coverage (Naeem et al.) of the real
  images of the class; the Fréchet distance to the real images of the class in the classifier's
  hidden-feature space.
Tail figures are means over the tail classes. The claims read the differences coral - ddpm.

Outputs: reports/coral_diffusion/metrics.json, per_class.csv, tail_vs_coral.png (+ .csv) and the
samples grid samples.png.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CLASSIFIER, CONTROL, DATA, GRID, METRICS, MODEL_CORAL, MODEL_DDPM, PLOT, PLOT_DATA, RESULTS

METHODS = ("ddpm", "coral")
SETS = ("lt", "bal")
SET_NAMES = {"lt": "long-tailed", "bal": "balanced control"}


def evaluate_model(model, d, clf, p, T: int, seed: int, device="cpu") -> tuple[dict, list[dict], "object"]:
    """Figures of one model: (summary, per-class rows, generated images (10 * per_class, 64))."""
    import numpy as np

    from stages.common.samples import coverage, frechet_from_features, mean_pairwise_distance

    from . import digits
    from .ddpm import bottleneck_features, sample
    from .measures import knn_overlap, pair_overlap

    feats = bottleneck_features(model, d["test_x"], d["test_y"], [p.t_overlap] + p.t_fracs, T=T, seed=seed + 1)
    overlaps = [knn_overlap(f, d["test_y"], p.tail, p.head, p.k) for f in feats]
    bhatta = [pair_overlap(f, d["test_y"], p.tail, p.head) for f in feats]
    labels = np.repeat(np.arange(10), p.per_class)
    gen = sample(model, labels, T=T, sample_steps=p.sample_steps, seed=seed + 2, device=device)
    model.cpu()
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
    return summary, rows, gen


def sample_grid(path, gens: dict, n_show: int) -> None:
    """One panel per (data set, model): a row per class, ``n_show`` samples a row."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    fig, axes = new_figure(1, len(gens), figsize=(3.2 * len(gens), 3.6))
    for ax, ((name, method), (gen, per_class)) in zip(np.atleast_1d(axes), gens.items()):
        rows = [np.concatenate([gen[c * per_class + i].reshape(8, 8) for i in range(n_show)], axis=1)
                for c in range(10)]
        ax.imshow((np.concatenate(rows, axis=0) + 1) / 2, cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
        ax.set_title(f"{SET_NAMES[name]}\n{method}", fontsize=9)
        ax.set_yticks([8 * c + 3.5 for c in range(10)], [str(c) for c in range(10)], fontsize=7)
        ax.set_xticks([])
    save_png(fig, path)


def main() -> None:
    with stage("coral_diffusion", "evaluate", PARAMS) as ctx:
        import numpy as np
        import torch

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from .ddpm import build_from_config, load_model_dir

        limit_threads()
        p = ctx.params.evaluate
        d, clf = np.load(ctx.path(DATA)), np.load(ctx.path(CLASSIFIER))
        models = {}
        for method, rel in (("ddpm", MODEL_DDPM), ("coral", MODEL_CORAL)):
            models["lt", method], config = load_model_dir(ctx.path(rel))
        control = torch.load(ctx.path(CONTROL), weights_only=True)
        for method in METHODS:
            m = build_from_config(control["config"])
            m.load_state_dict(control[method])
            models["bal", method] = m.eval()
        T = config["T"]

        metrics, table, gens = {}, [], {}
        for (name, method), model in models.items():
            s, rows, gen = evaluate_model(model, d, clf, p, T, ctx.seed, device=select_device(ctx.common.device))
            metrics.setdefault(name, {})[method] = s
            table += [{"data": name, "method": method, **r} for r in rows]
            gens[name, method] = (gen, p.per_class)
            print(f"  {name}/{method}: overlap {s['overlap']:.3f}; accuracy tail {s['tail_accuracy']:.3f} head "
                  f"{s['head_accuracy']:.3f}; tail diversity {s['tail_diversity']:.3f}, coverage "
                  f"{s['tail_coverage']:.3f}, Fréchet {s['tail_frechet']:.2f}", flush=True)
        for name in SETS:
            a, b = metrics[name]["ddpm"], metrics[name]["coral"]
            metrics[name]["overlap_drop"] = a["overlap"] - b["overlap"]
            metrics[name]["tail_accuracy_gain"] = b["tail_accuracy"] - a["tail_accuracy"]
            metrics[name]["tail_frechet_drop"] = a["tail_frechet"] - b["tail_frechet"]
            metrics[name]["tail_diversity_gain"] = b["tail_diversity"] - a["tail_diversity"]
        metrics["imbalance_overlap_excess"] = metrics["lt"]["ddpm"]["overlap"] - metrics["bal"]["ddpm"]["overlap"]
        metrics["control_overlap_drop_shrink"] = metrics["lt"]["overlap_drop"] - metrics["bal"]["overlap_drop"]
        metrics["control_accuracy_gain_shrink"] = metrics["lt"]["tail_accuracy_gain"] - metrics["bal"]["tail_accuracy_gain"]
        metrics["tail_classes"], metrics["head_classes"] = p.tail, p.head
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(RESULTS), table)

        # the comparison: tail overlap and tail accuracy, per data set and model
        plot_rows = [{"case": f"{meas}, {SET_NAMES[name]}", "measure": meas, "data": SET_NAMES[name], "ddpm": metrics[name]["ddpm"][key],
                      "coral": metrics[name]["coral"][key]}
                     for meas, key in (("tail-head overlap", "overlap"), ("tail accuracy", "tail_accuracy"),
                                       ("tail diversity", "tail_diversity"))
                     for name in SETS]
        write_csv(ctx.path(PLOT_DATA), plot_rows)
        fig, axes = new_figure(1, 3, figsize=(11, 3.4))
        for ax, meas in zip(axes, ("tail-head overlap", "tail accuracy", "tail diversity")):
            rows = [r for r in plot_rows if r["measure"] == meas]
            xs = np.arange(len(rows))
            ax.bar(xs - 0.18, [r["ddpm"] for r in rows], 0.36, label="DDPM")
            ax.bar(xs + 0.18, [r["coral"] for r in rows], 0.36, label="DDPM + CORAL")
            ax.set_xticks(xs, [r["data"] for r in rows], fontsize=8)
            ax.set_title(meas, fontsize=10)
        axes[0].legend(fontsize=8)
        fig.suptitle(f"coral_diffusion: tail classes {p.tail} vs head {p.head} (seed {ctx.seed})", fontsize=10)
        save_png(fig, ctx.path(PLOT))
        sample_grid(ctx.path(GRID), gens, n_show=min(10, p.per_class))


if __name__ == "__main__":
    main()
