"""sepo evaluate: for every verdict seed, the reward-KL curves of every method (the SEPO arms by
steps: the released loss, its shuffled-reward control and the re-derived variant; RWFT by
temperature; best-of-N by N; and the KL-optimal tilt, the frontier no method can cross), the
figures the claims read off them, and the plot.

Matched KL: each baseline's curve (its exact (KL, reward) points, the pre-trained model at KL 0
included) is interpolated linearly in KL at every checkpoint of a SEPO arm whose KL lies inside
the baseline's KL range; the gap is the arm's reward minus the interpolated baseline reward, and
``mean_gap`` its mean over those checkpoints (None when no checkpoint is inside the range).

Outputs: reports/sepo/metrics.json (``per_seed`` figures, what claims.yaml checks),
reports/sepo/reward_vs_kl.png and its data reports/sepo/reward_vs_kl.csv,
reports/sepo/matched_kl.csv.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CURVES, MATCHED, METRICS, PLOT, PLOT_DATA, PRETRAINED, PRETRAINED_DIST

ARM_NAMES = {"released": "SEPO (released loss)", "released_control": "SEPO released, shuffled rewards",
             "variant": "SEPO variant (sampler's score)"}
BASELINES = {"rwft": "RWFT", "best_of_n": "best-of-N", "tilt": "KL-optimal tilt"}


def seed_figures(p_pre, r_all, curves: dict, best_of, tilt_betas) -> tuple[dict, list[dict], list[dict]]:
    """One seed's figures from its exact pre-trained distribution and its curves: (metrics, the
    plot's rows, the matched-KL rows)."""
    import numpy as np

    from .dd import kl
    from .policy import ARMS, best_of_n, matched_gap, tilt, tilt_frontier

    r0 = float(p_pre @ r_all)
    rows = []
    for arm in ARMS:
        rows += [{"method": ARM_NAMES[arm], "strength": pt["step"], "kl": pt["kl"], "reward": pt["reward"]}
                 for pt in curves[arm]]
    rows += [{"method": "RWFT", "strength": pt["temperature"], "kl": pt["kl"], "reward": pt["reward"]}
             for pt in curves["rwft"]]
    for n in best_of:
        q = best_of_n(p_pre, r_all, n)
        rows.append({"method": "best-of-N", "strength": n, "kl": kl(q, p_pre), "reward": float(q @ r_all)})
    rows.append({"method": "KL-optimal tilt", "strength": None, "kl": 0.0, "reward": r0})
    for b in tilt_betas:
        q = tilt(p_pre, r_all, b)
        rows.append({"method": "KL-optimal tilt", "strength": b, "kl": kl(q, p_pre), "reward": float(q @ r_all)})
    by = {m: [r for r in rows if r["method"] == m] for m in dict.fromkeys(r["method"] for r in rows)}

    out, match_rows = {"pretrained": {"exact_mean_reward": r0, "exact_sum": float(p_pre.sum())}}, []
    for arm in ARMS:
        pts = by[ARM_NAMES[arm]]
        end, ks, rs = pts[-1], [r["kl"] for r in pts[1:]], [r["reward"] for r in pts[1:]]
        matched = {}
        for key, base in BASELINES.items():
            if key == "tilt":                    # the exact frontier at each KL, not a chord of its points
                g = [(k, r, tilt_frontier(p_pre, r_all, k)) for k, r in zip(ks, rs)]
            else:
                g = matched_gap(ks, rs, [r["kl"] for r in by[base]], [r["reward"] for r in by[base]])
            gaps = [a - b for _, a, b in g]
            matched[key] = {"points": len(g), "mean_gap": float(np.mean(gaps)) if g else None,
                            "min_gap": float(np.min(gaps)) if g else None,
                            "fraction_ge": float(np.mean([x >= 0 for x in gaps])) if g else None}
            match_rows += [{"arm": arm, "baseline": base, "kl": k, "arm_reward": a, "baseline_reward": b,
                            "gap": a - b} for k, a, b in g]
        out[arm] = {"final_reward": end["reward"], "final_kl": end["kl"], "gain": end["reward"] - r0,
                    "relative_gain": (end["reward"] - r0) / r0, "best_reward": max(r["reward"] for r in pts),
                    "matched_kl": matched}
    out["max_above_tilt_frontier"] = float(max(
        r["reward"] - tilt_frontier(p_pre, r_all, r["kl"])
        for m in (*ARM_NAMES.values(), "RWFT", "best-of-N") for r in by[m]))
    return out, rows, match_rows


def main() -> None:
    with stage("sepo", "evaluate", PARAMS) as ctx:
        import json

        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        from .dd import motif_reward

        limit_threads()   # one BLAS thread: the figures' last bits must not follow the cores given
        c = json.loads(ctx.path(CURVES).read_text())
        dist = np.load(ctx.path(PRETRAINED_DIST))
        held = [int(s) for s in dist["seeds"]]
        if sorted(held) != sorted(ctx.seeds) or sorted(int(s) for s in c["per_seed"]) != sorted(ctx.seeds):
            raise ValueError(f"sepo-train's outputs hold seeds {held}, the profile's verdict seeds are "
                             f"{list(ctx.seeds)}: run sepo-train")
        e, pp = ctx.params.evaluate, ctx.params.prepare
        r_all = dist["r_all"]
        figs, rows, match_rows = {}, [], []
        for s in ctx.seeds:
            p_pre = dist["p_pre"][held.index(s)]
            figs[s], r_, m_ = seed_figures(p_pre, r_all, c["per_seed"][str(s)], e.best_of, e.tilt_betas)
            rows += [{"seed": s, **r} for r in r_]
            match_rows += [{"seed": s, **r} for r in m_]
            f = figs[s]
            print(f"  seed {s}: pre-trained {f['pretrained']['exact_mean_reward']:.3f}; released SEPO "
                  f"{f['released']['gain']:+.3f} at KL {f['released']['final_kl']:.3f} (control "
                  f"{f['released_control']['gain']:+.3f}); variant {f['variant']['gain']:+.3f}; matched-KL mean gap "
                  f"released vs RWFT {f['released']['matched_kl']['rwft']['mean_gap']}, vs best-of-N "
                  f"{f['released']['matched_kl']['best_of_n']['mean_gap']}", flush=True)

        # the exact distribution against samples of the registered pre-trained model (its pyfunc): the
        # model of the first verdict seed (train saves that seed's models)
        import mlflow.pyfunc
        import pandas as pd
        ms = int(c["model_seed"])
        seqs = mlflow.pyfunc.load_model(str(ctx.path(PRETRAINED))).predict(
            pd.DataFrame({"seed": [ms * 1000 + 5], "n": [e.n_check_samples]}))[0]
        x = np.array([["ACGT".index(ch) for ch in s_] for s_ in seqs])
        check = {"seed": ms, "samples": e.n_check_samples,
                 "exact_mean_reward": figs[ms]["pretrained"]["exact_mean_reward"],
                 "sampled_mean_reward": float(motif_reward(x, pp.motif, pp.partial_weight).mean())}

        metrics = per_seed_metrics(figs, registered_model_check=check)
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(PLOT_DATA), rows)
        write_csv(ctx.path(MATCHED), match_rows)
        ctx.run.log_metrics({"released_gain": metrics["released"]["gain"],
                             "control_gain": metrics["released_control"]["gain"]})

        fig, axes = new_figure(1, len(ctx.seeds), figsize=(3.2 * len(ctx.seeds) + 1, 3.6), squeeze=False,
                               sharey=False)
        style = {ARM_NAMES["released"]: "o-", ARM_NAMES["released_control"]: "x:", ARM_NAMES["variant"]: "d-",
                 "RWFT": "s-", "best-of-N": "^-", "KL-optimal tilt": "k--"}
        for ax, s in zip(axes[0], ctx.seeds):
            for m in style:
                pts = [r for r in rows if r["seed"] == s and r["method"] == m]
                ax.plot([r["kl"] for r in pts], [r["reward"] for r in pts], style[m], label=m, ms=3)
            ax.set(xscale="symlog", xlabel="KL to pre-trained (nats)", title=f"seed {s}")
        axes[0][0].set_ylabel("exact mean reward")
        axes[0][0].legend(fontsize=6)
        fig.suptitle(f"sepo: exact reward vs KL (L={pp.length}, motif {pp.motif}), every verdict seed", fontsize=9)
        save_png(fig, ctx.path(PLOT))


if __name__ == "__main__":
    main()
