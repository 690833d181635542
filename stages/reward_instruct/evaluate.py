"""reward_instruct evaluate: the judge's reward and the Fréchet distance of every sample set, the
reward-quality curves, the claims' figures read off matched points, and the sample grid, for every
verdict seed (each with its own judge, teacher and generators).

Matched points: R0 and distillation + reward share the schedule, so their curves have points at
the same training steps; the comparative checks take the worst case over those points (the
first, the teacher itself, excluded), not one hand-picked setting.
The headline's control reads the curve of ``distill_regularised`` (R0 with the distillation loss put
back, the same schedule) against distillation + reward the same way.
Outputs: reports/reward_instruct/metrics.json (what claims.yaml checks: ``per_seed`` beside the mean
over the seeds, stages.common.seeds.per_seed_metrics), reward_vs_fd.png (every seed) and its data
reward_vs_fd.csv, samples.png (teacher, R0, distillation + reward of the first verdict seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import GRID, METRICS, MODELS, PLOT, PLOT_DATA, SAMPLES

LABELS = {"r0": "R0 (reward + weight reg. + random eta)", "distill": "distillation + reward",
          "unregularised": "reward only, no regulariser, aggressive (hacking control)",
          "r0_aggressive": "R0, aggressive schedule",
          "distill_regularised": "R0 + distillation loss (headline control)",
          "unregularised_gentle": "reward only, no regulariser, gentle"}
# the arms read against distillation + reward at matched points: R0, its control and (calibration
# only) R0 without its regulariser
COMPARED = ("r0", "distill_regularised", "unregularised_gentle")


def grid_image(sets, per_class: int):
    """One image: for each sample set (N, 64) ordered by class, a block of 10 rows (classes) by
    ``per_class`` columns, blocks side by side with a one-pixel gap. Pixels in [0, 1]."""
    import numpy as np

    blocks = []
    for x in sets:
        x = np.pad(np.asarray(x).reshape(10, -1, 8, 8)[:, :per_class], ((0, 0), (0, 0), (0, 1), (0, 1)),
                   constant_values=-1)                                   # (class, sample, 9, 9)
        blocks.append(x.transpose(0, 2, 1, 3).reshape(10 * 9, per_class * 9))
    return (np.concatenate([np.pad(b, ((0, 0), (0, 3)), constant_values=-1) for b in blocks], axis=1) + 1) / 2


def seed_figures(judge, real_feats, s: dict) -> tuple[dict, dict]:
    """One seed's figures from its samples ``s`` (the samples file's arrays of that seed, keys
    without the seed prefix) and its judge: (metrics, {run: curve of judge_metrics})."""
    from .data import EXTRA_RUNS, RUNS
    from .measure import judge_metrics

    c = s["classes"]
    ref = judge_metrics(judge, s["teacher_ref"], c, real_feats)
    few = judge_metrics(judge, s["teacher_few"], c, real_feats)
    curves = {name: [judge_metrics(judge, x, c, real_feats) for x in s[f"{name}_x"]]
              for name in RUNS + EXTRA_RUNS if f"{name}_x" in s}
    di = curves["distill"][1:]                                    # matched points after step 0
    final = {n: curves[n][-1] for n in curves}
    tfd, tdiv = ref["fd"], ref["diversity"]
    claim, matched = {}, {"steps": s["r0_steps"][1:].tolist()}
    for arm in (a for a in COMPARED if a in curves):
        pts = curves[arm][1:]
        diffs = [a["logp"] - b["logp"] for a, b in zip(pts, di)]
        claim[f"{arm}_minus_distill_logp_min"] = min(diffs)
        claim[f"{arm}_fd_over_teacher_max"] = max(m["fd"] for m in pts) / tfd
        claim[f"{arm}_accuracy_gain_final"] = final[arm]["accuracy"] - ref["accuracy"]
        claim[f"{arm}_over_distill_fd_max"] = max(a["fd"] / b["fd"] for a, b in zip(pts, di))
        matched[f"{arm}_minus_distill_logp"] = diffs
        matched[f"{arm}_above_distill_points"] = int(sum(d > 0 for d in diffs))
        matched[f"{arm}_minus_distill_logp_final"] = diffs[-1]
    matched["points"] = len(di)
    claim.update({
        "distill_accuracy_gain_final": final["distill"]["accuracy"] - ref["accuracy"],
        "control_fd_over_teacher_final": final["unregularised"]["fd"] / tfd,
        "r0_aggressive_fd_over_teacher_max": max(m["fd"] for m in curves["r0_aggressive"][1:]) / tfd,
        "r0_diversity_over_teacher_final": final["r0"]["diversity"] / tdiv,
    })
    metrics = {"claim": claim, "matched": matched, "teacher_ref": ref, "teacher_few": few, "final": final,
               "control_accuracy_final": final["unregularised"]["accuracy"]}
    return metrics, curves


def main() -> None:
    with stage("reward_instruct", "evaluate", PARAMS) as ctx:
        from stages.common.device import limit_threads

        limit_threads()        # one torch/BLAS thread: tiny MLPs gain nothing from two
        import numpy as np
        import torch

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .data import RUNS, load_digits_scaled, sample_key
        from .diffusion import load_classifier
        from .paths import seed_dir

        npz = np.load(ctx.path(SAMPLES))
        xr, _ = load_digits_scaled()
        rows, curves_of = [], {}

        def one(seed: int) -> dict:
            judge = load_classifier(ctx.path(MODELS) / seed_dir(seed) / "judge.pt")
            with torch.no_grad():
                real_feats = judge[:-1](torch.from_numpy(xr)).double().numpy()
            prefix = sample_key(seed, "")
            s = {k[len(prefix):]: npz[k] for k in npz.files if k.startswith(prefix)}
            if not s:
                raise SystemExit(f"{SAMPLES} holds no samples of seed {seed}: run the train stage")
            m, curves = seed_figures(judge, real_feats, s)
            curves_of[seed] = (m, curves, s)
            for name in RUNS:
                for step, c in zip(s[f"{name}_steps"].tolist(), curves[name]):
                    rows.append({"seed": seed, "method": name, "step": step, "judge_logp": c["logp"],
                                 "judge_accuracy": c["accuracy"], "fd": c["fd"],
                                 "fd_over_teacher": c["fd"] / m["teacher_ref"]["fd"], "diversity": c["diversity"]})
            print(f"  seed {seed}: teacher-{ctx.params.train.teacher_eval_steps}: acc {m['teacher_ref']['accuracy']:.3f} "
                  f"logp {m['teacher_ref']['logp']:.3f} FD {m['teacher_ref']['fd']:.1f}; "
                  + "; ".join(f"{k} {v:.3g}" for k, v in m["claim"].items()), flush=True)
            return m

        results = run_seeds(ctx.seeds, one, what="seed (judged)")
        write_json(ctx.path(METRICS), per_seed_metrics(results))
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(6.5, 4.5))
        colours = dict(zip(RUNS, ("C0", "C1", "C3", "C2", "C4")))
        for k, (seed, (m, curves, s)) in enumerate(curves_of.items()):
            tfd = m["teacher_ref"]["fd"]
            for name in RUNS:
                fds, lps = [c["fd"] / tfd for c in curves[name]], [c["logp"] for c in curves[name]]
                ax.plot(fds, lps, "o-", color=colours[name], label=LABELS[name] if k == 0 else None, ms=3,
                        lw=1, alpha=0.7)
            ax.plot([1.0], [m["teacher_ref"]["logp"]], "k*", ms=8, label="teacher, many steps" if k == 0 else None)
            ax.plot([m["teacher_few"]["fd"] / tfd], [m["teacher_few"]["logp"]], "kx", ms=6,
                    label="teacher, few steps (step 0 of every line)" if k == 0 else None)
        ax.axvline(3.0, color="grey", ls=":", lw=1, label="quality bound (3x teacher FD)")
        ax.set(xscale="log", xlabel="Fréchet distance / teacher's (judge features; log)",
               ylabel="judge log p(class | image) (held-out reward)",
               title=f"reward_instruct: reward vs quality, seeds {list(curves_of)}")
        ax.legend(fontsize=6, loc="lower left")
        save_png(fig, ctx.path(PLOT))
        per = ctx.params.evaluate.grid_per_class
        first = ctx.seeds[0]
        s = curves_of[first][2]
        img = grid_image([s["teacher_ref"], s["r0_x"][-1], s["distill_x"][-1]], per)
        fig, ax = new_figure(figsize=(7, 4))
        ax.imshow(img, cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
        ax.set_axis_off()
        ax.set_title(f"seed {first}: teacher ({ctx.params.train.teacher_eval_steps} steps) | R0 | distillation + "
                     f"reward ({ctx.params.train.gen_steps} steps); rows: digits 0-9", fontsize=8)
        save_png(fig, ctx.path(GRID))


if __name__ == "__main__":
    main()
