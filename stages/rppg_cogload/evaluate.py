"""rppg_cogload evaluate: the figures the claims read, per verdict seed (``per_seed`` in
metrics.json, stages.common.seeds.per_seed_metrics), and the plots (means over the seeds, each
seed's figure as a dot).

Heart-rate errors are mean absolute errors against the contact PPG measured by the same estimator
(FFT for the FFT rows, heartpy for the heartpy rows). Outputs: reports/rppg_cogload/metrics.json,
hr_mae.png/.csv (HR error per method and setting), load_accuracy.png/.csv (accuracy per
configuration and classifier) and signals.png (one recording).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import (ACC_PLOT, ACC_TABLE, EXAMPLE, HR_PLOT, HR_TABLE, MEASURES, METRICS, SIGNAL_PLOT, TRAIN_METRICS,
                    seed_slice)

SETTINGS = ("main", "shared_noise")
HR_METHODS = ("rgb", "nir", "fusion", "naive")


def hr_errors(m, setting: str) -> dict:
    """MAE (BPM) of each camera, SNR fusion and naive fusion against the contact FFT estimate; the
    ratios of the two fusions to the better camera; respiration MAE (breaths/min)."""
    import numpy as np

    gt = m["main/gt_hr"]
    e = {k: float(np.mean(np.abs(m[f"{setting}/{k}_hr"] - gt))) for k in HR_METHODS}
    best = min(e["rgb"], e["nir"])
    rr = {k: float(np.mean(np.abs(m[f"{setting}/{k}_rr"] - m["main/gt_rr"]))) for k in ("thermal", "radar", "resp_fusion")}
    hp = m[f"{setting}/fusion_hr_heartpy"] - m["main/gt_hr_heartpy"]
    return {"mae": e, "best_camera_mae": best, "fusion_over_best": e["fusion"] / best,
            "naive_over_best": e["naive"] / best, "rr_mae": rr,
            "resp_fusion_over_best": rr["resp_fusion"] / max(min(rr["thermal"], rr["radar"]), 1e-9),
            "fusion_heartpy_mae": float(np.nanmean(np.abs(hp))), "heartpy_failures": int(np.isnan(hp).sum())}


def seed_figures(m, acc) -> dict:
    """One seed's figures: ``m`` its measures (no ``s<seed>/`` prefix), ``acc`` its accuracies
    (train.seed_accuracies)."""
    import numpy as np

    hr = {s: hr_errors(m, s) for s in SETTINGS}
    lr = acc["main"]["lr"]
    ctl = acc["controls"]

    def gap(a, config="remote_ppg_resp_blink"):
        return 100 * (a[config] - a["contact"])

    return {
        "hr": hr,
        "hr_gt_heartpy_minus_fft_bpm": float(np.nanmean(m["main/gt_hr_heartpy"] - m["main/gt_hr"])),
        "load": {"accuracy": acc["main"], "controls": ctl, "shared_noise_lr": acc["shared_noise"]["lr"]},
        "claim": {
            "fusion_over_best_camera": hr["main"]["fusion_over_best"],
            "control_shared_noise_fusion_over_best": hr["shared_noise"]["fusion_over_best"],
            "naive_over_best_camera": hr["main"]["naive_over_best"],
            "fusion_hr_mae_bpm": hr["main"]["mae"]["fusion"],
            "remote_minus_contact_pp": gap(lr),
            "control_remote_ppg_only_minus_contact_pp": gap(lr, "remote_ppg"),
            "shared_noise_remote_minus_contact_pp": gap(acc["shared_noise"]["lr"]),
            "remote_accuracy": lr["remote_ppg_resp_blink"], "contact_accuracy": lr["contact"],
            "blink_adds_pp": 100 * (lr["remote_ppg_resp_blink"] - lr["remote_ppg_resp"]),
            "control_blink_shuffled_adds_pp": 100 * (ctl["blink_shuffled_lr"] - lr["remote_ppg_resp"]),
            "permuted_labels_accuracy": ctl["contact_permuted_labels_lr_mean"],
            "resp_fusion_over_best_sensor": hr["main"]["resp_fusion_over_best"],
        }}


def main() -> None:
    with stage("rppg_cogload", "evaluate", PARAMS) as ctx:
        from stages.common.device import limit_threads

        limit_threads()            # one BLAS thread: small problems, shared cores
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        allm = dict(np.load(ctx.path(MEASURES)))
        train = json.loads(ctx.path(TRAIN_METRICS).read_text())
        missing = [s for s in ctx.seeds if str(s) not in train["per_seed"]]
        if missing:
            raise KeyError(f"{TRAIN_METRICS} has no accuracies for seeds {missing}; run `dvc repro` for rppg_cogload-train")
        per = {s: seed_figures(seed_slice(allm, s), train["per_seed"][str(s)]) for s in ctx.seeds}
        metrics = per_seed_metrics(per)
        write_json(ctx.path(METRICS), metrics)
        seeds = list(ctx.seeds)

        rows = [{"seed": s, "setting": st, "method": k, "mae_bpm": per[s]["hr"][st]["mae"][k]}
                for s in seeds for st in SETTINGS for k in HR_METHODS]
        write_csv(ctx.path(HR_TABLE), rows)
        fig, ax = new_figure(figsize=(6.5, 3.6))
        width = 0.2
        for j, k in enumerate(HR_METHODS):
            xs = np.arange(len(SETTINGS)) + (j - 1.5) * width
            ax.bar(xs, [metrics["hr"][st]["mae"][k] for st in SETTINGS], width,
                   label={"fusion": "SNR fusion", "naive": "naive fusion (mean)"}.get(k, k.upper()))
            for i, st in enumerate(SETTINGS):
                ax.plot([xs[i]] * len(seeds), [per[s]["hr"][st]["mae"][k] for s in seeds], "k.", ms=3)
        ax.axhline(3, color="k", lw=0.8, ls="--", label="paper: fusion < 3 BPM")
        ax.set_xticks(range(len(SETTINGS)), ["main", "control: shared noise"])
        ax.set(ylabel="HR MAE vs contact (BPM)", title=f"rppg_cogload: heart rate (mean of seeds {seeds}; dots: seeds)")
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(HR_PLOT))

        configs = list(metrics["load"]["accuracy"]["lr"])
        rows = [{"seed": s, "setting": "main", "classifier": c, "config": k, "accuracy": per[s]["load"]["accuracy"][c][k]}
                for s in seeds for c in per[s]["load"]["accuracy"] for k in configs]
        rows += [{"seed": s, "setting": "shared_noise", "classifier": "lr", "config": k,
                  "accuracy": per[s]["load"]["shared_noise_lr"][k]} for s in seeds for k in configs]
        write_csv(ctx.path(ACC_TABLE), rows)
        fig, ax = new_figure(figsize=(7, 3.6))
        acc = metrics["load"]["accuracy"]
        width = 0.8 / len(acc)
        for j, c in enumerate(acc):
            xs = np.arange(len(configs)) + (j - (len(acc) - 1) / 2) * width
            ax.bar(xs, [acc[c][k] for k in configs], width, label=f"main {c}")
            for i, k in enumerate(configs):
                ax.plot([xs[i]] * len(seeds), [per[s]["load"]["accuracy"][c][k] for s in seeds], "k.", ms=3)
        ax.axhline(metrics["claim"]["permuted_labels_accuracy"], color="grey", ls=":", label="permuted labels (lr)")
        ax.axhline(0.875, color="k", lw=0.8, ls="--", label="paper: contact 87.5%")
        ax.set_xticks(range(len(configs)), [k.replace("_", "\n") for k in configs], fontsize=7)
        ax.set(ylim=(0.3, 1), ylabel="accuracy (GroupKFold by participant)",
               title="cognitive load (paper: remote 86.49%, contact 87.5%)")
        ax.legend(fontsize=6, ncol=2)
        save_png(fig, ctx.path(ACC_PLOT))

        ex = np.load(ctx.path(EXAMPLE))
        fs = float(ex["fs"])
        fig, axes = new_figure(4, 1, figsize=(7, 6), sharex=True)
        t = np.arange(len(ex["ppg"])) / fs
        for ax, keys, name in zip(axes, (("ppg",), ("rgb", "nir"), ("rsp", "thermal", "radar"), ("eye",)),
                                  ("contact PPG", "remote PPG", "respiration", "eye openness")):
            for k in keys:
                ax.plot(t, ex[k], lw=0.6, label=k)
            ax.set_ylabel(name, fontsize=8)
            ax.legend(fontsize=6, loc="upper right")
        axes[-1].set(xlim=(0, min(30, t[-1])), xlabel=f"s (seed {seeds[0]})")
        save_png(fig, ctx.path(SIGNAL_PLOT))
        for s in seeds:
            c = per[s]["claim"]
            print(f"  seed {s}: HR MAE fusion {c['fusion_hr_mae_bpm']:.2f} BPM, fusion/best {c['fusion_over_best_camera']:.3f} "
                  f"(shared noise {c['control_shared_noise_fusion_over_best']:.3f}); remote-contact "
                  f"{c['remote_minus_contact_pp']:+.1f} pp (remote PPG only {c['control_remote_ppg_only_minus_contact_pp']:+.1f}), "
                  f"blink adds {c['blink_adds_pp']:+.1f} pp (shuffled {c['control_blink_shuffled_adds_pp']:+.1f})", flush=True)


if __name__ == "__main__":
    main()
