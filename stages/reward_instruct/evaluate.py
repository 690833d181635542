"""reward_instruct evaluate: the judge's reward and the Fréchet distance of every sample set, the
reward-quality curves, the claims' figures read off matched points, and the sample grid.

Matched points: R0 and distillation + reward share the schedule, so their curves have points at
the same training steps; the comparative checks take the worst case over those points (the
first, the teacher itself, excluded), not one hand-picked setting.
Outputs: reports/reward_instruct/metrics.json (what claims.yaml checks), reward_vs_fd.png and its
data reward_vs_fd.csv, samples.png (teacher, R0, distillation + reward).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import GRID, METRICS, MODELS, PLOT, PLOT_DATA, SAMPLES

LABELS = {"r0": "R0 (reward + weight reg. + random eta)", "distill": "distillation + reward",
          "unregularised": "reward only, no regulariser (control)", "r0_aggressive": "R0, aggressive schedule"}


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


def main() -> None:
    with stage("reward_instruct", "evaluate", PARAMS) as ctx:
        from stages.common.device import limit_threads

        limit_threads()        # one torch/BLAS thread: tiny MLPs gain nothing from two
        import numpy as np
        import torch

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from .data import RUNS, load_digits_scaled
        from .diffusion import load_classifier
        from .measure import judge_metrics

        judge = load_classifier(ctx.path(MODELS) / "judge.pt")
        s = np.load(ctx.path(SAMPLES))
        c = s["classes"]
        xr, _ = load_digits_scaled()
        with torch.no_grad():
            real_feats = judge[:-1](torch.from_numpy(xr)).double().numpy()
        ref = judge_metrics(judge, s["teacher_ref"], c, real_feats)
        few = judge_metrics(judge, s["teacher_few"], c, real_feats)
        rows, curves = [], {}
        for name in RUNS:
            curves[name] = [judge_metrics(judge, x, c, real_feats) for x in s[f"{name}_x"]]
            for step, m in zip(s[f"{name}_steps"].tolist(), curves[name]):
                rows.append({"method": name, "step": step, "judge_logp": m["logp"], "judge_accuracy": m["accuracy"],
                             "fd": m["fd"], "fd_over_teacher": m["fd"] / ref["fd"], "diversity": m["diversity"]})
        r0, di = curves["r0"][1:], curves["distill"][1:]          # matched points after step 0
        final = {n: curves[n][-1] for n in RUNS}
        tfd, tdiv = ref["fd"], ref["diversity"]
        claim = {
            "r0_minus_distill_logp_min": min(a["logp"] - b["logp"] for a, b in zip(r0, di)),
            "r0_fd_over_teacher_max": max(m["fd"] for m in r0) / tfd,
            "r0_accuracy_gain_final": final["r0"]["accuracy"] - ref["accuracy"],
            "control_fd_over_teacher_final": final["unregularised"]["fd"] / tfd,
            "r0_aggressive_fd_over_teacher_max": max(m["fd"] for m in curves["r0_aggressive"][1:]) / tfd,
            "r0_over_distill_fd_max": max(a["fd"] / b["fd"] for a, b in zip(r0, di)),
            "r0_diversity_over_teacher_final": final["r0"]["diversity"] / tdiv,
        }
        diffs = [a["logp"] - b["logp"] for a, b in zip(r0, di)]
        matched = {"steps": s["r0_steps"][1:].tolist(), "r0_minus_distill_logp": diffs,
                   "r0_above_distill_points": int(sum(d > 0 for d in diffs)), "points": len(diffs),
                   "r0_minus_distill_logp_final": diffs[-1]}
        write_json(ctx.path(METRICS), {"claim": claim, "matched": matched, "teacher_ref": ref, "teacher_few": few,
                                       "final": final, "control_accuracy_final": final["unregularised"]["accuracy"]})
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(6.5, 4.5))
        for name in RUNS:
            fds, lps = [m["fd"] / tfd for m in curves[name]], [m["logp"] for m in curves[name]]
            ax.plot(fds, lps, "o-", label=LABELS[name], ms=4)
            ax.annotate(str(int(s[f"{name}_steps"][-1])), (fds[-1], lps[-1]), fontsize=7)
        ax.plot([1.0], [ref["logp"]], "k*", ms=10, label="teacher, many steps")
        ax.plot([few["fd"] / tfd], [few["logp"]], "kx", ms=8, label="teacher, few steps (step 0 of every line)")
        ax.axvline(3.0, color="grey", ls=":", lw=1, label="quality bound (3x teacher FD)")
        ax.set(xscale="log", xlabel="Fréchet distance / teacher's (judge features; log)",
               ylabel="judge log p(class | image) (held-out reward)", title="reward_instruct: reward vs quality")
        ax.legend(fontsize=7, loc="lower left")
        save_png(fig, ctx.path(PLOT))
        per = ctx.params.evaluate.grid_per_class
        img = grid_image([s["teacher_ref"], s["r0_x"][-1], s["distill_x"][-1]], per)
        fig, ax = new_figure(figsize=(7, 4))
        ax.imshow(img, cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
        ax.set_axis_off()
        ax.set_title(f"teacher ({ctx.params.train.teacher_eval_steps} steps) | R0 | distillation + reward "
                     f"({ctx.params.train.gen_steps} steps); rows: digits 0-9", fontsize=8)
        save_png(fig, ctx.path(GRID))
        print(f"  teacher-{ctx.params.train.teacher_eval_steps}: acc {ref['accuracy']:.3f} logp {ref['logp']:.3f} "
              f"FD {tfd:.1f}; " + "; ".join(f"{k} {v:.3g}" for k, v in claim.items()), flush=True)


if __name__ == "__main__":
    main()
