"""sepo evaluate: the reward-KL curves of every method (SEPO by steps, RWFT by temperature,
best-of-N by N, and the KL-optimal tilt, the frontier no method can cross), the checks read off
them, and the plot.

Matched KL: each baseline's curve (its exact (KL, reward) points, the pre-trained model at KL 0
included) is interpolated linearly in KL at every SEPO checkpoint whose KL lies inside the
baseline's KL range; the gap is SEPO's reward minus the interpolated baseline reward.

Outputs: reports/sepo/metrics.json (what claims.yaml checks), reports/sepo/reward_vs_kl.png and
its data reports/sepo/reward_vs_kl.csv, reports/sepo/matched_kl.csv.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CURVES, MATCHED, METRICS, PLOT, PLOT_DATA, PRETRAINED


def main() -> None:
    with stage("sepo", "evaluate", PARAMS) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from .dd import kl, motif_reward
        from .policy import best_of_n, matched_gap, tilt, tilt_frontier

        c = json.loads(ctx.path(CURVES).read_text())
        p_pre, r_all = np.array(c["p_pre"]), np.array(c["r_all"])
        e, pp = ctx.params.evaluate, ctx.params.prepare
        r0 = float(p_pre @ r_all)

        # the exact distribution against samples of the registered pre-trained model (its pyfunc)
        import mlflow.pyfunc
        import pandas as pd
        seqs = mlflow.pyfunc.load_model(str(ctx.path(PRETRAINED))).predict(
            pd.DataFrame({"seed": [ctx.seed * 1000 + 5], "n": [e.n_check_samples]}))[0]
        x = np.array([["ACGT".index(ch) for ch in s_] for s_ in seqs])
        sampled = float(motif_reward(x, pp.motif, pp.partial_weight).mean())

        rows = []
        for curve, method, key in ((c["sepo"], "SEPO", "step"), (c["control"], "SEPO shuffled rewards", "step"),
                                   (c["rwft"], "RWFT", "temperature")):
            rows += [{"method": method, "strength": pt[key], "kl": pt["kl"], "reward": pt["reward"]} for pt in curve]
        for n in e.best_of:
            q = best_of_n(p_pre, r_all, n)
            rows.append({"method": "best-of-N", "strength": n, "kl": kl(q, p_pre), "reward": float(q @ r_all)})
        rows.append({"method": "KL-optimal tilt", "strength": None, "kl": 0.0, "reward": r0})
        for b in e.tilt_betas:
            q = tilt(p_pre, r_all, b)
            rows.append({"method": "KL-optimal tilt", "strength": b, "kl": kl(q, p_pre), "reward": float(q @ r_all)})
        by = {m: [r for r in rows if r["method"] == m] for m in dict.fromkeys(r["method"] for r in rows)}

        sepo_pts = by["SEPO"][1:]
        matched, match_rows = {}, []
        for base in ("RWFT", "best-of-N", "KL-optimal tilt"):
            if base == "KL-optimal tilt":       # the exact frontier at each KL, not a chord of its points
                g = [(r["kl"], r["reward"], tilt_frontier(p_pre, r_all, r["kl"])) for r in sepo_pts]
            else:
                g = matched_gap([r["kl"] for r in sepo_pts], [r["reward"] for r in sepo_pts],
                                [r["kl"] for r in by[base]], [r["reward"] for r in by[base]])
            gaps = [a - b for _, a, b in g]
            matched[base] = {"points": len(g), "mean_gap": float(np.mean(gaps)) if g else None,
                             "min_gap": float(np.min(gaps)) if g else None,
                             "fraction_sepo_ge": float(np.mean([x_ >= 0 for x_ in gaps])) if g else None}
            match_rows += [{"baseline": base, "kl": k, "sepo_reward": a, "baseline_reward": b, "gap": a - b} for k, a, b in g]
        over_tilt = max(r["reward"] - tilt_frontier(p_pre, r_all, r["kl"])
                        for m in ("SEPO", "SEPO shuffled rewards", "RWFT", "best-of-N") for r in by[m])
        sepo_end, ctrl_end = by["SEPO"][-1], by["SEPO shuffled rewards"][-1]
        metrics = {
            "pretrained": {"exact_mean_reward": r0, "sampled_mean_reward": sampled, "exact_sum": float(p_pre.sum()),
                           "samples": e.n_check_samples},
            "sepo": {"final_reward": sepo_end["reward"], "final_kl": sepo_end["kl"], "gain": sepo_end["reward"] - r0,
                     "relative_gain": (sepo_end["reward"] - r0) / r0, "best_reward": max(r["reward"] for r in by["SEPO"])},
            "control": {"final_reward": ctrl_end["reward"], "final_kl": ctrl_end["kl"], "change": ctrl_end["reward"] - r0,
                        "abs_change": abs(ctrl_end["reward"] - r0)},
            "matched_kl": {"rwft": matched["RWFT"], "best_of_n": matched["best-of-N"], "tilt": matched["KL-optimal tilt"]},
            "max_above_tilt_frontier": float(over_tilt),
        }
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(PLOT_DATA), rows)
        write_csv(ctx.path(MATCHED), match_rows)
        ctx.run.log_metrics({"sepo_gain": metrics["sepo"]["gain"], "control_change": metrics["control"]["change"]})

        fig, ax = new_figure(figsize=(6.5, 4.2))
        style = {"SEPO": "o-", "SEPO shuffled rewards": "x:", "RWFT": "s-", "best-of-N": "^-", "KL-optimal tilt": "k--"}
        for m, pts in by.items():
            ax.plot([r["kl"] for r in pts], [r["reward"] for r in pts], style[m], label=m, ms=4)
        ax.axhline(r0, color="grey", lw=0.6)
        ax.set(xscale="symlog", xlabel="KL(model || pre-trained), exact (nats; symlog)", ylabel="exact mean reward",
               title=f"sepo: reward vs KL (L={pp.length}, motif {pp.motif}, seed {ctx.seed})")
        ax.legend(fontsize=8)
        save_png(fig, ctx.path(PLOT))
        print(f"  pre-trained {r0:.3f} (sampled {sampled:.3f}); SEPO {sepo_end['reward']:.3f} at KL {sepo_end['kl']:.2f}; "
              f"control change {metrics['control']['change']:+.3f}; matched-KL mean gap vs RWFT "
              f"{matched['RWFT']['mean_gap']}, vs best-of-N {matched['best-of-N']['mean_gap']}", flush=True)


if __name__ == "__main__":
    main()
