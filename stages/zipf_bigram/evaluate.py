"""zipf_bigram evaluate: log-log slopes of iterations vs d, the GD/sign ratio, the
dimension-free check, plots; reports/zipf_bigram/metrics.json is what claims.yaml reads.

The slopes, ratios and real-text figures do not depend on the seed (claims.yaml says
``deterministic: true``): top-level keys. The full model's agreement with the simulator is
measured on every verdict seed's permutations: ``per_seed``.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import ZipfParams
from .paths import CSV_REALTEXT, CSV_SCALING, METRICS, PLOT_CURVES, PLOT_SCALING, RESULTS


def scaling_metrics(scaling: list[dict], fit_min_d: int) -> dict:
    import numpy as np

    from .model import alpha_key, loglog_fit

    out: dict = {"gd": {}, "sign": {}, "ratio_gd_over_sign_at_dmax": {},
                 "gd_ratio_last_two_d": {}, "sign_ratio_last_two_d": {}}
    alphas = sorted({r["alpha"] for r in scaling})
    for alpha in alphas:
        rows = sorted((r for r in scaling if r["alpha"] == alpha), key=lambda r: r["d"])
        key = alpha_key(alpha)
        for opt in ("gd", "sign"):
            pts = [(r["d"], r[f"{opt}_iters"]) for r in rows
                   if r["d"] >= fit_min_d and r[f"{opt}_iters"]]
            if len(pts) >= 2 and len(pts) == len([r for r in rows if r["d"] >= fit_min_d]):
                d, t = np.array(pts, dtype=float).T
                out[opt][key] = {**loglog_fit(d, t), "n_points": len(pts), "d_min": int(d[0]),
                                 "d_max": int(d[-1]), "iters_at_dmax": int(t[-1])}
            last = [r[f"{opt}_iters"] for r in rows[-2:]]
            if len(last) == 2 and all(last):
                out[f"{opt}_ratio_last_two_d"][key] = last[1] / last[0]
        top = rows[-1]
        if top["gd_iters"] and top["sign_iters"]:
            out["ratio_gd_over_sign_at_dmax"][key] = top["gd_iters"] / top["sign_iters"]
    out["d_max"] = max(r["d"] for r in scaling)
    return out


def main() -> None:
    with stage("zipf_bigram", "evaluate", ZipfParams) as ctx:
        import json
        import math

        import matplotlib
        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        from .model import alpha_key

        results = json.loads(ctx.path(RESULTS).read_text())
        scaling = results["scaling"]
        m = scaling_metrics(scaling, 2 ** ctx.params.evaluate.fit_min_log2_d)
        m["epsilon"] = results["epsilon"]
        ag = results["agreement"]
        per_seed = {s: {"agreement_max_abs_diff": max(
            [max(a["gd_max_abs_diff"], a["sign_max_abs_diff"]) for a in ag if a["seed"] == s], default=None)}
            for s in ctx.seeds}
        rt = results["realtext"]
        relerr = rt["relerr"]
        m["realtext"] = {
            "relerr_gd": relerr["gd"], "relerr_sign": relerr["sign"], "relerr_adam": relerr["adam"],
            "gd_over_adaptive": relerr["gd"] / max(relerr["sign"], relerr["adam"]),
            "steps": rt["steps"], "d_in": rt["d_in"], "d_out": rt["d_out"],
            "sign_lr": rt["tuned_lr"]["sign"], "adam_lr": rt["tuned_lr"]["adam"],
            **{f"iters_to_gd_final_{k}": v for k, v in rt["iters_to_gd_final"].items() if v is not None},
        }
        m["sign_eta_rel_range"] = [min(r["sign_eta_rel"] for r in scaling if r["sign_eta_rel"]),
                                   max(r["sign_eta_rel"] for r in scaling if r["sign_eta_rel"])]
        write_json(ctx.path(METRICS), per_seed_metrics(per_seed, **m))

        # iterations vs d, log-log, one line per optimizer x alpha
        alphas = sorted({r["alpha"] for r in scaling})
        ds = sorted({r["d"] for r in scaling})
        fig, ax = new_figure(figsize=(7, 4.5))
        cmap = matplotlib.colormaps["viridis"]
        csv_rows = {d: {"log2_d": math.log2(d)} for d in ds}
        for i, alpha in enumerate(alphas):
            colour = cmap(i / max(len(alphas) - 1, 1))
            for opt, style in (("gd", "-o"), ("sign", "--s")):
                pts = sorted((r["d"], r[f"{opt}_iters"]) for r in scaling
                             if r["alpha"] == alpha and r[f"{opt}_iters"])
                if not pts:
                    continue
                x, y = zip(*pts)
                fit = m[opt].get(alpha_key(alpha))
                label = f"{'GD' if opt == 'gd' else 'sign'} α={alpha:g}" + (
                    f" (slope {fit['slope']:.2f})" if fit else "")
                ax.loglog(x, y, style, color=colour, label=label, ms=3, lw=1.2)
                for d, t in pts:
                    csv_rows[d][f"log10_{opt}_{alpha_key(alpha)}"] = math.log10(t)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("vocabulary size d")
        ax.set_ylabel(f"iterations to relative error {results['epsilon']:g}")
        ax.set_title("GD vs tuned sign descent on the linear bigram model")
        ax.legend(fontsize=6.5, ncol=2)
        ax.grid(True, which="both", alpha=0.3)
        save_png(fig, ctx.path(PLOT_SCALING))
        cols = sorted({k for r in csv_rows.values() for k in r})
        write_csv(ctx.path(CSV_SCALING), [{k: r.get(k, "") for k in cols} for r in csv_rows.values()])

        # loss curves: full model vs simulator (alpha=1, largest full d) and real text
        fig, axes = new_figure(1, 2, figsize=(10, 4))
        if ag:
            a = max((a for a in ag if a["seed"] == ctx.seeds[0]), key=lambda a: (a["alpha"] == 1.0, a["d"]))
            t = np.arange(len(a["gd_full"]))
            for k, style in (("gd_full", "-"), ("gd_sim", ":"), ("sign_full", "-"), ("sign_sim", ":")):
                axes[0].semilogy(t, a[k], style, label=k.replace("_", " "), lw=1.5 if "full" in k else 2.5)
            axes[0].set_title(f"synthetic α={a['alpha']:g}, d={a['d']}, seed {a['seed']}: torch model vs simulator")
            axes[0].set_xlabel("iteration"); axes[0].set_ylabel("relative error"); axes[0].legend(fontsize=8)
        for k, c in rt["curves"].items():
            axes[1].semilogy(c, label=f"{k} (lr {rt['tuned_lr'].get(k, rt['gd_lr']):.3g})")
        axes[1].set_title(f"real text (lee_background, {rt['d_in']}×{rt['d_out']})")
        axes[1].set_xlabel("iteration"); axes[1].set_ylabel("relative error"); axes[1].legend(fontsize=8)
        save_png(fig, ctx.path(PLOT_CURVES))
        n = len(rt["curves"]["gd"])
        write_csv(ctx.path(CSV_REALTEXT), [{"step": i, **{k: rt["curves"][k][i] for k in rt["curves"]}}
                                           for i in range(n)])
        print(f"  slopes at alpha=1: GD {m['gd'].get('alpha_1', {}).get('slope')}, "
              f"sign {m['sign'].get('alpha_1', {}).get('slope')}; "
              f"GD/sign at d={m['d_max']}: {m['ratio_gd_over_sign_at_dmax'].get('alpha_1')}")


if __name__ == "__main__":
    main()
