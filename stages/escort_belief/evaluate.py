"""escort_belief evaluate: belief accuracy (MMD at several bandwidths, POT's sliced Wasserstein)
against exact samples of the true belief, light-dark returns, plots; reports/escort_belief/
metrics.json is what claims.yaml reads.

Per dimension d, method and replication: the distance of the method's belief at the final
step (and the mean over all steps) to the exact samples. The particle filter is scored with its
importance weights (``pf``) and, as context, after resampling (``pf_resampled``);
``escort_official`` (the official code's update, mixture problems only) is scored like the others. ``exact`` is a
reference: n fresh exact samples of the true belief, i.e. the distance a perfect n-particle
belief gets (the noise floor). MMD = the mean over the bandwidths ``mmd_scales`` x the median
pairwise distance of the exact samples. Seed intervals: t intervals over the replications.

At the largest d (``reps_dmax`` replications; issue 20) the ratios of the methods' mean MMD
(and sliced W) get paired bootstrap intervals over the replications (``n_boot`` resamples;
metrics.paired_ratio_ci), plotted per replication in ratio_reps_dmax.png. Context only: the
MMD with one fixed bandwidth ``mmd_fixed_bandwidth`` (the official code's compute_mmd,
``mmd_fixed``), the particle filter's effective sample size and the exact samples' median
distance at the final step.
"""
from __future__ import annotations

from stages.common.stage import fail, stage

from .params import EscortBeliefParams
from .prepare import PROBLEMS
from .train import LIGHTDARK, METHODS, MIXTURE_METHODS, PARTICLES

METRICS = "reports/escort_belief/metrics.json"
PLOT_DIM = "reports/escort_belief/accuracy_vs_dim.png"
PLOT_2D = "reports/escort_belief/particles_2d.png"
PLOT_LD = "reports/escort_belief/lightdark_returns.png"
PLOT_RATIO = "reports/escort_belief/ratio_reps_dmax.png"
CSV_DIM = "reports/escort_belief/accuracy_vs_dim.csv"
RNG_EXACT, RNG_RESAMPLE, RNG_BOOT = 31, 32, 33
SCORED = ("pf", "svgd", "escort", "escort_official", "pf_resampled", "exact")
LABEL = {"pf": "particle filter", "svgd": "SVGD", "escort": "ESCORT", "escort_official": "ESCORT (official code)",
         "pf_resampled": "PF (resampled)", "exact": "exact samples (floor)"}


def t_interval(v, level: float) -> list[float]:
    """[low, high] of the mean's t-interval (stages.common.stats.t_interval)."""
    from stages.common.stats import t_interval as interval

    ci = interval(v, level)
    return [ci["low"], ci["high"]]


def beliefs(arr, parts, d: int, seed: int) -> dict:
    """{method: (particles (reps, T, n, d), weights or None)} including the two references."""
    import numpy as np

    from .mixture import sample_mixture, systematic_resample

    X = {m: (parts[f"d{d}/{m}"], None) for m in ("svgd", "escort", "escort_official")}
    Xpf, W = parts[f"d{d}/pf"], parts[f"d{d}/pf_w"]
    X["pf"] = (Xpf, W)
    B, T, n, _ = Xpf.shape
    rng = np.random.default_rng([seed, RNG_RESAMPLE, d])
    idx = np.stack([systematic_resample(rng, W[:, t]) for t in range(T)], 1)
    X["pf_resampled"] = (np.take_along_axis(Xpf, idx[..., None], axis=2), None)
    ex = np.empty_like(Xpf)
    for b in range(B):
        for t in range(T):
            ex[b, t] = sample_mixture(np.random.default_rng([seed, RNG_EXACT, d, b, t]), arr[f"d{d}/bw"][b, t],
                                      arr[f"d{d}/bm"][b, t], arr[f"d{d}/bP"][b, t], n)
    X["exact"] = (ex, None)
    return X


def score_dim(arr, parts, d: int, ep, seed: int) -> dict:
    """{method: {"mmd": (reps, T), "mmd_bw": (reps, T, n_bw), "mmd_fixed": (reps, T), "sw": (reps, T)}};
    ``mmd_fixed`` = the MMD with the one fixed bandwidth ``mmd_fixed_bandwidth`` (the official code's
    compute_mmd), context only."""
    import numpy as np

    from .metrics import median_distance, mmd, mmd_self_term, sliced_w

    exact = arr[f"d{d}/exact"]                           # (reps, T, m, d)
    B, T = exact.shape[:2]
    bel = beliefs(arr, parts, d, seed)
    nb = len(ep.mmd_scales)
    mb = {m: np.zeros((B, T, nb + 1)) for m in bel}
    sw = {m: np.zeros((B, T)) for m in bel}
    for b in range(B):
        for t in range(T):
            Y = exact[b, t]
            sig = np.append(np.array(ep.mmd_scales) * median_distance(Y), ep.mmd_fixed_bandwidth)
            yy = mmd_self_term(Y, sig)                   # the exact samples' term, once for all methods
            for m, (X, W) in bel.items():
                a = None if W is None else W[b, t]
                mb[m][b, t] = mmd(X[b, t], Y, sig, a, yy=yy)
                sw[m][b, t] = sliced_w(X[b, t], Y, ep.sw_projections, seed=int(1000 * b + t), a=a)
    return {m: {"mmd": mb[m][..., :nb].mean(-1), "mmd_bw": mb[m][..., :nb], "mmd_fixed": mb[m][..., nb],
                "sw": sw[m]} for m in bel}


def summarise(scores: dict, dims, ep, seed: int) -> dict:
    import numpy as np

    from .metrics import paired_ratio_ci

    res = {"mmd": {}, "sw": {}, "mmd_fixed": {}, "mmd_by_bandwidth": {}}
    for m in SCORED:
        for key in ("mmd", "sw", "mmd_fixed"):
            res[key][m] = {}
            for d in dims:
                v = scores[d][m][key]
                res[key][m][f"d{d}"] = {"final": float(v[:, -1].mean()), "final_ci": t_interval(v[:, -1], ep.ci_level),
                                        "final_reps": v[:, -1].tolist(), "all_steps": float(v.mean())}
        res["mmd_by_bandwidth"][m] = {f"d{d}": scores[d][m]["mmd_bw"][:, -1].mean(0).tolist() for d in dims}
    dmax = f"d{max(dims)}"
    ratios = {}
    for ki, key in enumerate(("mmd", "sw", "mmd_fixed")):
        f = lambda m: res[key][m][dmax]["final"]  # noqa: E731
        reps = lambda m: np.array(res[key][m][dmax]["final_reps"])  # noqa: E731
        ci = lambda a, b: paired_ratio_ci(reps(a), reps(b), ep.n_boot, ep.ci_level,  # noqa: E731
                                          np.random.default_rng([seed, RNG_BOOT, ki]))
        ratios[key] = {"escort_over_pf_dmax": f("escort") / f("pf"),
                       "escort_over_svgd_dmax": f("escort") / f("svgd"),
                       "svgd_over_pf_dmax": f("svgd") / f("pf"),
                       "escort_over_pf_resampled_dmax": f("escort") / f("pf_resampled"),
                       "escort_over_pf_dmax_reps": (reps("escort") / reps("pf")).tolist(),
                       "escort_over_svgd_dmax_reps": (reps("escort") / reps("svgd")).tolist(),
                       "escort_over_svgd_all_steps_dmax": res[key]["escort"][dmax]["all_steps"]
                       / res[key]["svgd"][dmax]["all_steps"],
                       "escort_official_over_pf_dmax": f("escort_official") / f("pf"),
                       "escort_official_over_svgd_dmax": f("escort_official") / f("svgd"),
                       "escort_official_over_pf_resampled_dmax": f("escort_official") / f("pf_resampled"),
                       "escort_official_over_pf_dmax_reps": (reps("escort_official") / reps("pf")).tolist(),
                       # paired bootstrap intervals over the replications at the largest d (issue 20)
                       "escort_over_pf_dmax_ci": ci("escort", "pf"),
                       "escort_over_svgd_dmax_ci": ci("escort", "svgd"),
                       "escort_official_over_pf_dmax_ci": ci("escort_official", "pf")}
        for name in ("escort_over_pf_dmax_ci", "escort_over_svgd_dmax_ci", "escort_official_over_pf_dmax_ci"):
            ratios[key][name.replace("_ci", "_ci_high")] = ratios[key][name]["high"]
            ratios[key][name.replace("_ci", "_ci_low")] = ratios[key][name]["low"]
    res["ratios"] = ratios
    res["dmax"] = max(dims)
    res["reps_dmax"] = int(len(scores[max(dims)]["pf"]["mmd"]))
    return res


def belief_context(arr, parts, dims) -> dict:
    """What the fixed-bandwidth MMD reads (context): the particle filter's effective sample size
    1 / sum w^2 at the final step, and the exact samples' median pairwise distance, mean over
    replications, per d."""
    import numpy as np

    from .metrics import median_distance

    ess = {f"d{d}": float((1.0 / (parts[f"d{d}/pf_w"][:, -1] ** 2).sum(-1)).mean()) for d in dims}
    med = {f"d{d}": float(np.mean([median_distance(Y) for Y in arr[f"d{d}/exact"][:, -1]])) for d in dims}
    return {"pf_ess_final": ess, "exact_median_distance_final": med}


def lightdark_metrics(ld: dict, ep) -> dict:
    import numpy as np

    out = {}
    for m in METHODS:
        r = np.array(ld[m]["returns"])
        out[m] = {"return": float(r.mean()), "return_ci": t_interval(r, ep.ci_level),
                  "success": float(np.mean(ld[m]["success"])), "declared": float(np.mean(ld[m]["declared"])),
                  "steps": float(np.mean(ld[m]["steps"])), "belief_error": ld[m]["mean_error"]}
    best_other = max(out[m]["return"] for m in METHODS if m != "escort")
    out["escort_margin"] = out["escort"]["return"] - best_other
    out["best"] = max(METHODS, key=lambda m: out[m]["return"])
    return out


def plot_dims(summary: dict, dims, path) -> None:
    import matplotlib.ticker
    import numpy as np

    from stages.common.plots import new_figure, save_png

    fig, axes = new_figure(1, 2, figsize=(11, 4.2))
    for ax, key, name in ((axes[0], "mmd", "MMD (mean over bandwidths)"), (axes[1], "sw", "sliced W2 (POT)")):
        for i, m in enumerate(("pf", "svgd", "escort", "escort_official", "exact")):
            s = summary[key][m]
            y = np.array([s[f"d{d}"]["final"] for d in dims])
            ci = np.array([s[f"d{d}"]["final_ci"] for d in dims])
            ax.errorbar(np.array(dims) * (1 + 0.03 * (i - 2)), y, yerr=[y - ci[:, 0], ci[:, 1] - y],
                        capsize=3, label=LABEL[m], ls=":" if m == "exact" else "-", marker="o", color=f"C{i}")
        ax.set(xscale="log", xticks=dims, xlabel="state dimension d", ylabel=name,
               title=f"{name} to the exact belief, final step")
        ax.set_xticklabels([str(d) for d in dims])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.legend(fontsize=8)
    save_png(fig, path)


def plot_ratio_reps(summary: dict, path) -> None:
    """Per-replication MMD ratios to the particle filter at the largest d, sorted, with the ratio of
    the means and its paired bootstrap interval for each method."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    r, d = summary["ratios"]["mmd"], summary["dmax"]
    fig, ax = new_figure(figsize=(7, 4.2))
    for i, (m, key) in enumerate((("escort", "escort_over_pf_dmax"), ("escort_official", "escort_official_over_pf_dmax"))):
        v = np.sort(np.array(r[f"{key}_reps"]))
        ci = r[f"{key}_ci"]
        ax.plot(np.arange(1, len(v) + 1), v, "o", ms=4, color=f"C{i + 2}",
                label=f"{LABEL[m]} / PF per replication")
        ax.axhline(ci["ratio"], color=f"C{i + 2}", lw=1.5,
                   label=f"ratio of means {ci['ratio']:.3f} [{ci['low']:.3f}, {ci['high']:.3f}]")
        ax.axhspan(ci["low"], ci["high"], color=f"C{i + 2}", alpha=0.15)
    ax.set(xlabel="replication (sorted)", ylabel="MMD ratio to the particle filter",
           title=f"d = {d}, final step: {len(v)} replications, paired bootstrap intervals")
    ax.legend(fontsize=8)
    save_png(fig, path)


def plot_particles(arr, parts, d: int, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    Y = arr[f"d{d}/exact"][0, -1]
    mu = Y.mean(0)
    V = np.linalg.eigh(np.cov(Y.T))[1][:, ::-1][:, :2] if d > 1 else np.eye(1)
    proj = lambda Z: (Z - mu) @ V  # noqa: E731
    fig, axes = new_figure(1, 4, figsize=(17, 4.2), sharex=True, sharey=True)
    W = parts[f"d{d}/pf_w"][0, -1]
    for ax, m in zip(axes, MIXTURE_METHODS):
        ey = proj(Y)
        ax.scatter(ey[:, 0], ey[:, 1], s=4, c="0.75", label="exact samples")
        P = proj(parts[f"d{d}/{m}"][0, -1])
        size = 12 if m != "pf" else 12 * len(W) * W
        ax.scatter(P[:, 0], P[:, 1], s=size, c="C3", label=LABEL[m] + (" (size = weight)" if m == "pf" else ""))
        ax.set(title=f"{LABEL[m]}, d = {d}, final step", xlabel="PC 1 of the exact belief", ylabel="PC 2")
        ax.legend(fontsize=8, loc="upper right")
    save_png(fig, path)


def plot_lightdark(ldm: dict, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    fig, ax = new_figure(figsize=(5.5, 4))
    y = np.array([ldm[m]["return"] for m in METHODS])
    ci = np.array([ldm[m]["return_ci"] for m in METHODS])
    ax.bar(range(len(METHODS)), y, yerr=[y - ci[:, 0], ci[:, 1] - y], capsize=4, color=["C0", "C1", "C2"])
    ax.set_xticks(range(len(METHODS)))
    ax.set_xticklabels([f"{LABEL[m]}\nsuccess {ldm[m]['success']:.2f}" for m in METHODS])
    ax.set(ylabel="mean return per episode", title="light-dark POMDP, same policy on each belief")
    save_png(fig, path)


def main() -> None:
    with stage("escort_belief", "evaluate", EscortBeliefParams) as ctx:
        import json

        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import write_csv

        limit_threads()
        ep, dims = ctx.params.evaluate, ctx.params.prepare.dims
        for rel, step in ((PROBLEMS, "prepare"), (PARTICLES, "train"), (LIGHTDARK, "train")):
            if not ctx.path(rel).exists():
                fail(f"{rel} is missing: run `dvc repro stages/escort_belief/dvc.yaml:escort_belief-{step}` first")
        with np.load(ctx.path(PROBLEMS)) as z:
            arr = {k: z[k] for k in z.files}
        with np.load(ctx.path(PARTICLES)) as z:
            parts = {k: z[k] for k in z.files}
        scores = {d: score_dim(arr, parts, d, ep, ctx.seed) for d in tqdm(dims, desc="scoring dims")}
        summary = summarise(scores, dims, ep, ctx.seed)
        summary.update(belief_context(arr, parts, dims))
        ldm = lightdark_metrics(json.loads(ctx.path(LIGHTDARK).read_text()), ep)
        metrics = {**summary, "lightdark": ldm, "dims": list(dims)}
        write_json(ctx.path(METRICS), metrics)
        rows = [{"d": d, "method": m, "mmd": summary["mmd"][m][f"d{d}"]["final"],
                 "sw": summary["sw"][m][f"d{d}"]["final"]} for d in dims for m in SCORED]
        write_csv(ctx.path(CSV_DIM), rows)
        plot_dims(summary, dims, ctx.path(PLOT_DIM))
        plot_ratio_reps(summary, ctx.path(PLOT_RATIO))
        plot_particles(arr, parts, max(dims), ctx.path(PLOT_2D))
        plot_lightdark(ldm, ctx.path(PLOT_LD))
        for d in dims:
            print(f"  d={d}: MMD " + " ".join(f"{m} {summary['mmd'][m][f'd{d}']['final']:.3f}" for m in SCORED), flush=True)
        r = summary["ratios"]["mmd"]
        ci, cio = r["escort_over_pf_dmax_ci"], r["escort_official_over_pf_dmax_ci"]
        print(f"  MMD ratios at d={max(dims)} ({summary['reps_dmax']} replications): ESCORT/PF "
              f"{r['escort_over_pf_dmax']:.3f} [{ci['low']:.3f}, {ci['high']:.3f}], "
              f"official-code ESCORT/PF {r['escort_official_over_pf_dmax']:.3f} [{cio['low']:.3f}, {cio['high']:.3f}], "
              f"ESCORT/SVGD {r['escort_over_svgd_dmax']:.3f}; light-dark best {ldm['best']}, "
              f"ESCORT margin {ldm['escort_margin']:.2f}", flush=True)


if __name__ == "__main__":
    main()
