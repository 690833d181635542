"""escort_belief evaluate: belief accuracy (MMD at several bandwidths, POT's sliced Wasserstein)
against exact samples of the true belief, light-dark returns, plots, for every verdict seed;
reports/escort_belief/metrics.json is what claims.yaml reads.

Per verdict seed (``ctx.seeds``; one independent repetition of the whole experiment), dimension
d, method and replication: the distance of the method's belief at the final step (MMD also the
mean over all steps) to the exact samples. The particle filter is scored with its importance
weights (``pf``) and, as context, after resampling (``pf_resampled``); ``escort_official`` (the
official code's update, mixture problems only) is scored like the others. ``exact`` is a
reference: n fresh exact samples of the true belief, i.e. the distance a perfect n-particle
belief gets (the noise floor). MMD = the mean over the bandwidths ``mmd_scales`` x the median
pairwise distance of the exact samples. Within a seed: t intervals over the replications.

Per seed, at the largest d (``reps_dmax`` replications), the ratios of the methods' mean MMD (and
sliced W) over that seed's replications: the figures the claims read, each seed's value judged
over the seeds by the ledger. Each carries its within-seed BCa bootstrap interval over the
replications (paired; metrics.ratio_interval), plotted per seed in ratio_reps_dmax.png. Context
only: the MMD with one fixed bandwidth ``mmd_fixed_bandwidth`` (the official code's compute_mmd,
``mmd_fixed``), the particle filter's effective sample size and the exact samples' median
distance at the final step.

metrics.json: ``per_seed`` (each seed's figures) beside the mean over the seeds of every figure
(stages.common.seeds.per_seed_metrics); figures that only mean something within one seed (per
replication values, within-seed intervals) are kept in ``per_seed`` alone.
"""
from __future__ import annotations

import json

from stages.common.runtime.stage import fail, stage

from .keys import METHODS, MIXTURE_METHODS
from .params import EscortBeliefParams
from .paths import (CSV_DIM, LIGHTDARK, METRICS, PARTICLES, PLOT_2D, PLOT_DIM, PLOT_LD, PLOT_RATIO, PROBLEMS,
                    TRAIN_DIR)

RNG_EXACT, RNG_RESAMPLE = 31, 32
SCORED = ("pf", "svgd", "escort", "escort_official", "pf_resampled", "exact")
LABEL = {"pf": "particle filter", "svgd": "SVGD", "escort": "ESCORT", "escort_official": "ESCORT (official code)",
         "pf_resampled": "PF (resampled)", "exact": "exact samples (floor)"}
# the per-seed ratios at the largest d plotted in ratio_reps_dmax.png: the must's figure, its
# control (SVGD: ESCORT without its two terms) and the official-code ESCORT
RATIO_PLOT = (("escort", "escort_over_pf_dmax"), ("svgd", "svgd_over_pf_dmax"),
              ("escort_official", "escort_official_over_pf_dmax"))
# figures that mean something within one seed only: kept in per_seed, not averaged over seeds
WITHIN_SEED = ("_reps", "_ci", "_ci_low", "_ci_high")


def t_interval(v, level: float) -> list[float]:
    """[low, high] of the mean's t-interval over replications (stages.common.inference.t_interval)."""
    from stages.common.inference import t_interval as interval

    return list(interval(v, level))


def beliefs(arr, parts, d: int, seed: int) -> dict:
    """{method: (particles (reps, T, n, d), weights or None)} of one seed, including the two references."""
    import numpy as np

    from .mixture import sample_mixture, systematic_resample
    from .keys import key

    X = {m: (parts[key(seed, d, m)], None) for m in ("svgd", "escort", "escort_official")}
    Xpf, W = parts[key(seed, d, "pf")], parts[key(seed, d, "pf_w")]
    X["pf"] = (Xpf, W)
    B, T, n, _ = Xpf.shape
    rng = np.random.default_rng([seed, RNG_RESAMPLE, d])
    idx = np.stack([systematic_resample(rng, W[:, t]) for t in range(T)], 1)
    X["pf_resampled"] = (np.take_along_axis(Xpf, idx[..., None], axis=2), None)
    ex = np.empty_like(Xpf)
    for b in range(B):
        for t in range(T):
            ex[b, t] = sample_mixture(np.random.default_rng([seed, RNG_EXACT, d, b, t]), arr[key(seed, d, "bw")][b, t],
                                      arr[key(seed, d, "bm")][b, t], arr[key(seed, d, "bP")][b, t], n)
    X["exact"] = (ex, None)
    return X


def score_dim(arr, parts, d: int, ep, seed: int) -> dict:
    """One seed: {method: {"mmd": (reps, T), "mmd_bw": (reps, T, n_bw), "mmd_fixed": (reps, T), "sw": (reps,)}};
    ``mmd_fixed`` = the MMD with the one fixed bandwidth ``mmd_fixed_bandwidth`` (the official code's
    compute_mmd), context only; ``sw`` at the final step only (context; the costliest score)."""
    import numpy as np

    from .metrics import median_distance, mmd, mmd_self_term, sliced_w
    from .keys import key

    exact = arr[key(seed, d, "exact")]                   # (reps, T, m, d)
    B, T = exact.shape[:2]
    bel = beliefs(arr, parts, d, seed)
    nb = len(ep.mmd_scales)
    mb = {m: np.zeros((B, T, nb + 1)) for m in bel}
    sw = {m: np.zeros(B) for m in bel}
    for b in range(B):
        for t in range(T):
            Y = exact[b, t]
            sig = np.append(np.array(ep.mmd_scales) * median_distance(Y), ep.mmd_fixed_bandwidth)
            yy = mmd_self_term(Y, sig)                   # the exact samples' term, once for all methods
            for m, (X, W) in bel.items():
                a = None if W is None else W[b, t]
                mb[m][b, t] = mmd(X[b, t], Y, sig, a, yy=yy)
                if t == T - 1:
                    sw[m][b] = sliced_w(X[b, t], Y, ep.sw_projections, seed=int(1000 * b + t), a=a)
    return {m: {"mmd": mb[m][..., :nb].mean(-1), "mmd_bw": mb[m][..., :nb], "mmd_fixed": mb[m][..., nb],
                "sw": sw[m]} for m in bel}


def summarise(scores: dict, dims, ep, seed: int) -> dict:
    """One seed's figures: distances per method and d (final step: mean and t interval over the
    replications), and at the largest d the ratios of mean distances with their BCa intervals."""
    import numpy as np

    from .metrics import ratio_interval

    res = {"mmd": {}, "sw": {}, "mmd_fixed": {}, "mmd_by_bandwidth": {}}
    for m in SCORED:
        for key in ("mmd", "sw", "mmd_fixed"):
            res[key][m] = {}
            for d in dims:
                v = scores[d][m][key]
                final = v if key == "sw" else v[:, -1]
                res[key][m][f"d{d}"] = {"final": float(final.mean()), "final_ci": t_interval(final, ep.ci_level),
                                        "final_reps": final.tolist()}
                if key != "sw":
                    res[key][m][f"d{d}"]["all_steps"] = float(v.mean())
        res["mmd_by_bandwidth"][m] = {f"d{d}": scores[d][m]["mmd_bw"][:, -1].mean(0).tolist() for d in dims}
    dmax = f"d{max(dims)}"
    ratios = {}
    for key in ("mmd", "sw", "mmd_fixed"):
        f = lambda m: res[key][m][dmax]["final"]  # noqa: E731
        reps = lambda m: np.array(res[key][m][dmax]["final_reps"])  # noqa: E731
        ci = lambda a, b: ratio_interval(reps(a), reps(b), ep.ci_level, ep.n_boot, seed)  # noqa: E731
        ratios[key] = {"escort_over_pf_dmax": f("escort") / f("pf"),
                       "escort_over_svgd_dmax": f("escort") / f("svgd"),
                       "svgd_over_pf_dmax": f("svgd") / f("pf"),
                       "escort_over_pf_resampled_dmax": f("escort") / f("pf_resampled"),
                       "escort_over_pf_dmax_reps": (reps("escort") / reps("pf")).tolist(),
                       "svgd_over_pf_dmax_reps": (reps("svgd") / reps("pf")).tolist(),
                       "escort_over_svgd_dmax_reps": (reps("escort") / reps("svgd")).tolist(),
                       "escort_official_over_pf_dmax": f("escort_official") / f("pf"),
                       "escort_official_over_svgd_dmax": f("escort_official") / f("svgd"),
                       "escort_official_over_pf_resampled_dmax": f("escort_official") / f("pf_resampled"),
                       "escort_official_over_pf_dmax_reps": (reps("escort_official") / reps("pf")).tolist(),
                       # within-seed BCa intervals over the replications at the largest d
                       "escort_over_pf_dmax_ci": ci("escort", "pf"),
                       "svgd_over_pf_dmax_ci": ci("svgd", "pf"),
                       "escort_over_svgd_dmax_ci": ci("escort", "svgd"),
                       "escort_official_over_pf_dmax_ci": ci("escort_official", "pf")}
        if key != "sw":
            ratios[key]["escort_over_svgd_all_steps_dmax"] = (res[key]["escort"][dmax]["all_steps"]
                                                              / res[key]["svgd"][dmax]["all_steps"])
        for name in [k for k in ratios[key] if k.endswith("_ci")]:
            ratios[key][name + "_low"] = ratios[key][name]["low"]
            ratios[key][name + "_high"] = ratios[key][name]["high"]
    res["ratios"] = ratios
    return res


def belief_context(arr, parts, dims, seed: int) -> dict:
    """What the fixed-bandwidth MMD reads (context), for one seed: the particle filter's effective
    sample size 1 / sum w^2 at the final step, and the exact samples' median pairwise distance,
    mean over replications, per d."""
    import numpy as np

    from .metrics import median_distance
    from .keys import key

    ess = {f"d{d}": float((1.0 / (parts[key(seed, d, "pf_w")][:, -1] ** 2).sum(-1)).mean()) for d in dims}
    med = {f"d{d}": float(np.mean([median_distance(Y) for Y in arr[key(seed, d, "exact")][:, -1]])) for d in dims}
    return {"pf_ess_final": ess, "exact_median_distance_final": med}


def lightdark_metrics(ld: dict, ep) -> dict:
    """One seed's light-dark figures (``ld``: that seed's section of lightdark.json)."""
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


def within_seed(key: str) -> bool:
    return key.endswith(WITHIN_SEED)


def drop_within_seed(tree):
    """The aggregate over seeds without the figures that mean something within one seed only."""
    if isinstance(tree, dict):
        return {k: drop_within_seed(v) for k, v in tree.items() if not within_seed(k)}
    return tree


def seed_metrics(results: dict, **shared) -> dict:
    """metrics.json: ``per_seed`` (every seed's figures) beside the mean over the seeds of every
    figure that is not a within-seed one (stages.common.seeds.per_seed_metrics)."""
    from stages.common.seeds import per_seed_metrics

    out = per_seed_metrics(results, **shared)
    return {**drop_within_seed({k: v for k, v in out.items() if k != "per_seed"}), "per_seed": out["per_seed"]}


def over_seeds(values, level: float) -> tuple[float, float, float]:
    """Mean of per-seed values and its t interval over the seeds (the mean twice for one seed)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return float(v.mean()), float(v.mean()), float(v.mean())
    lo, hi = t_interval(v, level)
    return float(v.mean()), lo, hi


def plot_dims(per_seed: dict, dims, level: float, path) -> None:
    """MMD and sliced W vs d per method: mean over the seeds of each seed's mean over replications,
    with the t interval over the seeds."""
    import matplotlib.ticker
    import numpy as np

    from stages.common.plots import new_figure, save_png

    seeds = list(per_seed)
    fig, axes = new_figure(1, 2, figsize=(11, 4.2))
    for ax, key, name in ((axes[0], "mmd", "MMD (mean over bandwidths)"), (axes[1], "sw", "sliced W2 (POT)")):
        for i, m in enumerate(("pf", "svgd", "escort", "escort_official", "exact")):
            stats = np.array([over_seeds([per_seed[s][key][m][f"d{d}"]["final"] for s in seeds], level) for d in dims])
            y = stats[:, 0]
            ax.errorbar(np.array(dims) * (1 + 0.03 * (i - 2)), y, yerr=[y - stats[:, 1], stats[:, 2] - y],
                        capsize=3, label=LABEL[m], ls=":" if m == "exact" else "-", marker="o", color=f"C{i}")
        ax.set(xscale="log", xticks=dims, xlabel="state dimension d", ylabel=name,
               title=f"{name} to the exact belief, final step ({len(seeds)} seeds)")
        ax.set_xticklabels([str(d) for d in dims])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.legend(fontsize=8)
    save_png(fig, path)


def plot_ratio_seeds(per_seed: dict, dmax: int, path) -> None:
    """Per seed, at the largest d: each replication's MMD ratio to the particle filter (dots) and
    the seed's ratio of means with its within-seed BCa interval, for ESCORT, SVGD (the control)
    and the official-code ESCORT."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    seeds = list(per_seed)
    fig, ax = new_figure(figsize=(7.5, 4.2))
    for i, (m, key) in enumerate(RATIO_PLOT):
        for j, s in enumerate(seeds):
            r = per_seed[s]["ratios"]["mmd"]
            x = j + (i - 1) * 0.25
            reps = np.array(r[f"{key}_reps"])
            ax.plot(np.full(len(reps), x), reps, ".", ms=3, color=f"C{i + 1}", alpha=0.35)
            ci = r[f"{key}_ci"]
            ax.errorbar([x], [ci["ratio"]], yerr=[[ci["ratio"] - ci["low"]], [ci["high"] - ci["ratio"]]], fmt="o",
                        capsize=3, color=f"C{i + 1}", label=f"{LABEL[m]} / PF" if j == 0 else None)
    ax.set_xticks(range(len(seeds)))
    ax.set_xticklabels([f"seed {s}" for s in seeds])
    ax.set(ylabel="MMD ratio to the particle filter",
           title=f"d = {dmax}, final step: per-replication ratios and each seed's ratio of means (BCa)")
    ax.legend(fontsize=8)
    save_png(fig, path)


def plot_particles(arr, parts, d: int, seed: int, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    from .keys import key

    Y = arr[key(seed, d, "exact")][0, -1]
    mu = Y.mean(0)
    V = np.linalg.eigh(np.cov(Y.T))[1][:, ::-1][:, :2] if d > 1 else np.eye(1)
    proj = lambda Z: (Z - mu) @ V  # noqa: E731
    fig, axes = new_figure(1, 4, figsize=(17, 4.2), sharex=True, sharey=True)
    W = parts[key(seed, d, "pf_w")][0, -1]
    for ax, m in zip(axes, MIXTURE_METHODS):
        ey = proj(Y)
        ax.scatter(ey[:, 0], ey[:, 1], s=4, c="0.75", label="exact samples")
        P = proj(parts[key(seed, d, m)][0, -1])
        size = 12 if m != "pf" else 12 * len(W) * W
        ax.scatter(P[:, 0], P[:, 1], s=size, c="C3", label=LABEL[m] + (" (size = weight)" if m == "pf" else ""))
        ax.set(title=f"{LABEL[m]}, d = {d}, seed {seed}, final step", xlabel="PC 1 of the exact belief", ylabel="PC 2")
        ax.legend(fontsize=8, loc="upper right")
    save_png(fig, path)


def plot_lightdark(per_seed: dict, level: float, path) -> None:
    """Mean return per method: the mean over seeds with its t interval, and each seed's mean (dots)."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    seeds = list(per_seed)
    fig, ax = new_figure(figsize=(5.5, 4))
    per = np.array([[per_seed[s]["lightdark"][m]["return"] for s in seeds] for m in METHODS])
    stats = np.array([over_seeds(v, level) for v in per])
    y = stats[:, 0]
    ax.bar(range(len(METHODS)), y, yerr=[y - stats[:, 1], stats[:, 2] - y], capsize=4, color=["C0", "C1", "C2"],
           alpha=0.8)
    for i, v in enumerate(per):
        ax.plot(np.full(len(v), i), v, "k.", ms=5)
    ax.set_xticks(range(len(METHODS)))
    succ = [np.mean([per_seed[s]["lightdark"][m]["success"] for s in seeds]) for m in METHODS]
    ax.set_xticklabels([f"{LABEL[m]}\nsuccess {sr:.2f}" for m, sr in zip(METHODS, succ)])
    ax.set(ylabel="mean return per episode", title=f"light-dark POMDP, same policy on each belief ({len(seeds)} seeds)")
    save_png(fig, path)


def read_shards(train_dir, seeds) -> tuple[dict, dict]:
    """The train stage's shards (``shard-<i>/`` in ``train_dir``) merged: every seed's particles
    and light-dark episodes, after checking that the shards hold each verdict seed exactly once."""
    import numpy as np

    from stages.common.seeds import gather_shards

    dirs = sorted(train_dir.glob("shard-*")) if train_dir.is_dir() else []
    if not dirs:
        raise ValueError("no shard-<i>/ folder: run `dvc repro stages/escort_belief/dvc.yaml:escort_belief-train`")
    parts, ld, held = {}, {}, {}
    for d in dirs:
        if not (d / PARTICLES).exists() or not (d / LIGHTDARK).exists():
            raise ValueError(f"{d.name} lacks {PARTICLES} or {LIGHTDARK}: run "
                             "`dvc repro stages/escort_belief/dvc.yaml:escort_belief-train`")
        with np.load(d / PARTICLES) as z:
            parts.update({k: z[k] for k in z.files})
        shard_ld = json.loads((d / LIGHTDARK).read_text())
        ld.update(shard_ld)
        held[d.name] = [int(s) for s in shard_ld]
    gather_shards(held, seeds)
    return parts, ld


def main() -> None:
    with stage("escort_belief", "evaluate", EscortBeliefParams) as ctx:

        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import write_csv

        from .keys import missing_keys

        limit_threads()
        ep, dims, seeds = ctx.params.evaluate, ctx.params.prepare.dims, ctx.seeds
        with np.load(ctx.path(PROBLEMS)) as z:
            arr = {k: z[k] for k in z.files}
        try:
            parts, ld = read_shards(ctx.path(TRAIN_DIR), seeds)
        except ValueError as err:
            fail(f"{TRAIN_DIR}: {err}")
        missing = missing_keys(parts, seeds, dims, "pf")
        if missing:
            fail(f"{TRAIN_DIR} lacks {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}: "
                 f"run `dvc repro stages/escort_belief/dvc.yaml:escort_belief-train`")
        results = {}
        with tqdm(total=len(seeds) * len(dims), desc="scoring seeds x dims", mininterval=2) as bar:
            for seed in seeds:
                scores = {}
                for d in dims:
                    scores[d] = score_dim(arr, parts, d, ep, seed)
                    bar.update(1)
                results[seed] = {**summarise(scores, dims, ep, seed), **belief_context(arr, parts, dims, seed),
                                 "lightdark": lightdark_metrics(ld[str(seed)], ep)}
        reps_dmax = len(results[seeds[0]]["mmd"]["pf"][f"d{max(dims)}"]["final_reps"])
        metrics = seed_metrics(results, dims=list(dims), dmax=max(dims), reps_dmax=reps_dmax)
        write_json(ctx.path(METRICS), metrics)
        rows = [{"d": d, "method": m, "mmd": metrics["mmd"][m][f"d{d}"]["final"],
                 "sw": metrics["sw"][m][f"d{d}"]["final"]} for d in dims for m in SCORED]
        write_csv(ctx.path(CSV_DIM), rows)
        plot_dims(results, dims, ep.ci_level, ctx.path(PLOT_DIM))
        plot_ratio_seeds(results, max(dims), ctx.path(PLOT_RATIO))
        plot_particles(arr, parts, max(dims), seeds[0], ctx.path(PLOT_2D))
        plot_lightdark(results, ep.ci_level, ctx.path(PLOT_LD))
        for d in dims:
            print(f"  d={d}: MMD, mean over {len(seeds)} seeds: "
                  + " ".join(f"{m} {metrics['mmd'][m][f'd{d}']['final']:.3f}" for m in SCORED), flush=True)
        for seed in seeds:
            r, ldm = results[seed]["ratios"]["mmd"], results[seed]["lightdark"]
            ci, cs, co = r["escort_over_pf_dmax_ci"], r["svgd_over_pf_dmax_ci"], r["escort_official_over_pf_dmax_ci"]
            print(f"  seed {seed}, MMD ratios at d={max(dims)} ({reps_dmax} replications, BCa): ESCORT/PF "
                  f"{ci['ratio']:.3f} [{ci['low']:.3f}, {ci['high']:.3f}], SVGD/PF {cs['ratio']:.3f} "
                  f"[{cs['low']:.3f}, {cs['high']:.3f}], official-code ESCORT/PF {co['ratio']:.3f} "
                  f"[{co['low']:.3f}, {co['high']:.3f}], ESCORT/SVGD {r['escort_over_svgd_dmax']:.3f}; light-dark "
                  f"best {ldm['best']}, ESCORT margin {ldm['escort_margin']:.2f}", flush=True)


if __name__ == "__main__":
    main()
