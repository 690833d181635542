"""gara_sam evaluate: IoU of every arm on the test scenes, clean and under every corruption, and GaRA's
effective rank per condition, for every verdict seed (``ctx.seeds``): the frozen model is shared,
the adapted arms and the test scenes are the seed's own.

IoU is per image (threshold ``evaluate.threshold`` on the foreground probability), averaged over the
test scenes; "seen" and "unseen" average over the corruptions of each group. Gains over the frozen
model and between arms are paired per image, with Student-t 95% intervals over the test scenes.
The effective rank of a gated arm is the number of rank-1 components its gates switch on, averaged
over the six adapted layers and the images of a condition.

Outputs: reports/gara_sam/metrics.json (what claims.yaml checks: ``per_seed`` figures beside their
means over the seeds, stages.common.seeds.per_seed_metrics), reports/gara_sam/iou_by_condition.csv,
reports/gara_sam/iou_by_group.png with its data iou_by_group.csv, and reports/gara_sam/gate_rank.png.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import METRICS, PLOT, PLOT_DATA, RANK_PLOT, RESULTS, SCENES, WEIGHTS

LEVEL = 0.95
RANK_FLOOR = 1e-3       # components: the least mean effective rank a ratio divides by


ARMS = ("frozen", "lora", "gara", "gara_const")


def score(weights, data, tp, ep, seed: int) -> tuple[dict, dict]:
    """Per arm and condition on ``seed``'s test scenes: per-image IoU (numpy), and for the gated arms the
    per-image effective rank."""
    from .net import build_arm, iou_per_image, load_arrays, predict, to_tensor
    from .scenes import CONDITIONS

    a = tp.adapt
    masks, test_x = data[f"{seed}/test_y"], data[f"{seed}/test_x"]
    ious, ranks = {}, {}
    for arm in ARMS:
        model, gated = build_arm(arm, tp.width, a.rank, a.alpha, a.tau, a.gate_bias)
        load_arrays(model, weights, arm if arm == "frozen" else f"{seed}/{arm}")
        ious[arm], ranks[arm] = {}, {}
        for i, cond in enumerate(CONDITIONS):
            probs, rank = predict(model, to_tensor(test_x[i], image=True), ep.batch, gated)
            ious[arm][cond] = iou_per_image(probs > ep.threshold, masks)
            if rank is not None:
                ranks[arm][cond] = rank
    return ious, {k: v for k, v in ranks.items() if v}


def summarise(ious: dict, ranks: dict) -> dict:
    """The metrics file: per arm the IoU per condition and group, gains over frozen (paired, with t
    intervals), GaRA vs LoRA, and the gated arms' effective ranks with their max/min ratio."""
    import numpy as np

    from stages.common.stats import t_interval

    from .scenes import SEEN, UNSEEN

    def groups(d):           # per-image IoU averaged over a group's conditions
        return {"clean": d["clean"], "seen": np.mean([d[c] for c in SEEN], 0),
                "unseen": np.mean([d[c] for c in UNSEEN], 0),
                "corrupt": (np.mean([d[c] for c in SEEN], 0) + np.mean([d[c] for c in UNSEEN], 0)) / 2}

    g = {arm: groups(d) for arm, d in ious.items()}
    out: dict = {"iou": {}, "gain_over_frozen": {}}
    for arm, d in ious.items():
        out["iou"][arm] = {**{c: float(v.mean()) for c, v in d.items()}, **{k: float(v.mean()) for k, v in g[arm].items()}}
        if arm != "frozen":
            out["gain_over_frozen"][arm] = {k: t_interval(g[arm][k] - g["frozen"][k], LEVEL) for k in g[arm]}
    out["gara_minus_lora"] = {k: t_interval(g["gara"][k] - g["lora"][k], LEVEL) for k in g["gara"]}
    out["gara_minus_const"] = {k: t_interval(g["gara"][k] - g["gara_const"][k], LEVEL) for k in g["gara"]}
    out["rank"] = {}
    for arm, rk in ranks.items():
        means = {c: float(v.mean()) for c, v in rk.items()}
        hi, lo = max(means.values()), min(means.values())
        # all gates shut in every condition: one rank (1.0); shut in some only: the min is floored at
        # RANK_FLOOR components, so the ratio stays a finite number in the JSON
        out["rank"][arm] = {"by_condition": means, "max": hi, "min": lo,
                            "max_over_min": 1.0 if hi == 0 else hi / max(lo, RANK_FLOOR)}
    # the figures claims.yaml reads
    out["gara_seen_gain"] = out["gain_over_frozen"]["gara"]["seen"]["mean"]
    out["gara_rank_max_over_min"] = out["rank"]["gara"]["max_over_min"]
    out["gara_clean_drop"] = out["gain_over_frozen"]["gara"]["clean"]["mean"]
    out["gara_minus_lora_corrupt"] = out["gara_minus_lora"]["corrupt"]["mean"]
    out["gara_minus_lora_clean"] = out["gara_minus_lora"]["clean"]["mean"]
    out["gara_minus_const_corrupt"] = out["gara_minus_const"]["corrupt"]["mean"]
    # the controls: the same figures for the arm without the paper's contribution
    out["controls"] = {
        "seen_gain_lora": out["gain_over_frozen"]["lora"]["seen"]["mean"],            # fixed-rank LoRA
        "clean_drop_lora": out["gain_over_frozen"]["lora"]["clean"]["mean"],
        "rank_max_over_min_gara_const": out["rank"]["gara_const"]["max_over_min"],   # gate blind to its input
        "clean_drop_gara_const": out["gain_over_frozen"]["gara_const"]["clean"]["mean"],  # rank fixed for all inputs
    }
    return out


def evaluate_seeds(weights, data, tp, ep, seeds) -> dict:
    """metrics.json: every seed's summarise() under ``per_seed``, beside their means over the seeds."""
    from stages.common.seeds import per_seed_metrics

    results = {}
    for seed in seeds:
        results[seed] = summarise(*score(weights, data, tp, ep, seed))
        r = results[seed]
        print(f"  seed {seed}: IoU corrupted gara {r['iou']['gara']['corrupt']:.3f}, lora {r['iou']['lora']['corrupt']:.3f}, "
              f"gara_const {r['iou']['gara_const']['corrupt']:.3f}; clean drop {r['gara_clean_drop']:+.3f}", flush=True)
    return per_seed_metrics(results)


def main() -> None:
    with stage("gara_sam", "evaluate", PARAMS) as ctx:
        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from .scenes import CONDITIONS, SEEN

        limit_threads()
        data, weights = np.load(ctx.path(SCENES)), np.load(ctx.path(WEIGHTS))
        m = evaluate_seeds(weights, data, ctx.params.train, ctx.params.evaluate, ctx.seeds)
        write_json(ctx.path(METRICS), m)
        write_csv(ctx.path(RESULTS), [{"arm": arm, "condition": c, "group": "clean" if c == "clean" else
                                       ("seen" if c in SEEN else "unseen"), "iou": m["iou"][arm][c],
                                       "effective_rank": m["rank"].get(arm, {}).get("by_condition", {}).get(c, "")}
                                      for arm in ARMS for c in CONDITIONS])
        groups = ("clean", "seen", "unseen")
        write_csv(ctx.path(PLOT_DATA), [{"group": k, **{arm: m["iou"][arm][k] for arm in ARMS}} for k in groups])

        fig, ax = new_figure(figsize=(7, 3.8))
        width = 0.8 / len(ARMS)
        for i, arm in enumerate(ARMS):
            ys = [m["iou"][arm][k] for k in groups]
            if arm == "frozen":
                err = None
            else:
                gi = m["gain_over_frozen"][arm]
                err = [[gi[k]["mean"] - gi[k]["low"] for k in groups], [gi[k]["high"] - gi[k]["mean"] for k in groups]]
            ax.bar(np.arange(3) + (i - (len(ARMS) - 1) / 2) * width, ys, width, yerr=err, capsize=2, label=arm)
        lo = min(m["iou"][arm][k] for arm in ARMS for k in groups)
        ax.set(xticks=np.arange(3), xticklabels=["clean", "seen corruptions", "unseen corruptions"], ylabel="mean IoU",
               ylim=(max(0.0, lo - 0.1), 1.0),
               title=f"gara_sam: IoU by condition group (mean of seeds {list(ctx.seeds)}; bars: mean 95% CI)")
        ax.legend(fontsize=8, ncol=len(ARMS), loc="upper center")
        save_png(fig, ctx.path(PLOT))

        fig, ax = new_figure(figsize=(7, 3.5))
        for arm in m["rank"]:
            ax.plot(range(len(CONDITIONS)), [m["rank"][arm]["by_condition"][c] for c in CONDITIONS], "o-",
                    label=f"{arm} (max/min {m['rank'][arm]['max_over_min']:.2f})")
        ax.axvline(len(SEEN) + 0.5, color="grey", lw=0.8, ls=":")
        ax.set(xticks=range(len(CONDITIONS)), ylabel="mean effective rank", ylim=(0, None),
               title="gara_sam: components switched on per condition (left of the line: clean + seen)")
        ax.set_xticklabels([c.replace("_", "\n") for c in CONDITIONS], fontsize=7)
        ax.legend(fontsize=8)
        save_png(fig, ctx.path(RANK_PLOT))
        ctx.run.log_metrics({"gara_seen_gain": m["gara_seen_gain"], "gara_rank_max_over_min": m["gara_rank_max_over_min"],
                             "gara_clean_drop": m["gara_clean_drop"], "gara_minus_lora_corrupt": m["gara_minus_lora_corrupt"]})
        print("  IoU clean/seen/unseen: " + "; ".join(
            f"{arm} {m['iou'][arm]['clean']:.3f}/{m['iou'][arm]['seen']:.3f}/{m['iou'][arm]['unseen']:.3f}" for arm in ARMS)
            + f"; GaRA rank max/min {m['gara_rank_max_over_min']:.2f}", flush=True)


if __name__ == "__main__":
    main()
