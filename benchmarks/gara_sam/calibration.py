"""Calibration of gara_sam on calibration seeds (>= 1000): the study's own functions (prepare.build_base /
build_seed, train.pretrain / adapt, evaluate.score / summarise) at a profile's sizes, every arm, and
the figures the claims read, per seed and over the seeds.

    nice -n 19 python benchmarks/gara_sam/calibration.py [--seeds 1000,...] [--profile default]
        [--set train.adapt.lam=0.1] [--full]

Prints CPU seconds per phase, IoU (clean / seen / unseen / corrupted) per arm and seed, and per seed
the must's figure GaRA - LoRA on corrupted IoU beside its control gara_const - LoRA, and the shoulds'
figures. ``--full`` adds full fine-tuning (the one-seed design's fourth arm; not in the stages).
``--smoke`` runs it at the smoke profile's sizes in seconds (what CI runs), two seeds. Verdict seeds
(< 1000) are refused (docs/VERDICTS.md, section 1).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--full", action="store_true", help="also full fine-tuning (not a stage arm)")
    a, seeds = parse_seeds(ap)

    import numpy as np

    from stages.common.device import limit_threads
    from stages.gara_sam.evaluate import summarise
    from stages.gara_sam.net import build_arm, iou_per_image, load_arrays, predict, state_arrays, to_tensor
    from stages.gara_sam.params import PARAMS
    from stages.gara_sam.prepare import build_base, build_seed
    from stages.gara_sam.scenes import CONDITIONS
    from stages.gara_sam.train import ADAPT_ARMS, adapt, pretrain

    limit_threads()
    p = study_params("gara_sam", PARAMS, a)
    tp, ep = p.train, p.evaluate
    arms = ADAPT_ARMS + (("full",) if a.full else ())
    print(f"profile {a.profile}, seeds {seeds}, arms {arms}; base seed {p.prepare.base_seed}", flush=True)
    cpu = {}
    t0 = time.process_time()
    base_data = build_base(p.prepare)
    base, _ = pretrain(to_tensor(base_data["pre_x"], image=True), to_tensor(base_data["pre_y"]), tp.width,
                       tp.pretrain, p.prepare.base_seed, progress=False)
    cpu["pretrain"] = time.process_time() - t0
    frozen_arrays = state_arrays(base, "frozen")
    rows = {}
    for seed in seeds:
        d = build_seed(p.prepare, seed, progress=False)
        x, y = to_tensor(d["adapt_x"], image=True), to_tensor(d["adapt_y"])
        arrays = dict(frozen_arrays)
        for arm in arms:
            t0 = time.process_time()
            model, _, _, _ = adapt(arm, base, x, y, tp.adapt, seed, progress=False)
            cpu[arm] = cpu.get(arm, 0.0) + time.process_time() - t0
            arrays.update(state_arrays(model, arm))
        t0 = time.process_time()
        ious, ranks = {}, {}
        for arm in ("frozen",) + arms:
            model, gated = build_arm(arm, tp.width, tp.adapt.rank, tp.adapt.alpha, tp.adapt.tau, tp.adapt.gate_bias)
            load_arrays(model, arrays, arm)
            ious[arm], ranks[arm] = {}, {}
            for i, cond in enumerate(CONDITIONS):
                probs, rank = predict(model, to_tensor(d["test_x"][i], image=True), ep.batch, gated)
                ious[arm][cond] = iou_per_image(probs > ep.threshold, d["test_y"])
                if rank is not None:
                    ranks[arm][cond] = rank
        full_iou = ious.pop("full", None)
        m = summarise(ious, {k: v for k, v in ranks.items() if v})
        cpu["evaluate"] = cpu.get("evaluate", 0.0) + time.process_time() - t0
        r = rows[seed] = {
            "gara-lora corrupt": m["iou"]["gara"]["corrupt"] - m["iou"]["lora"]["corrupt"],
            "const-lora corrupt (control)": m["iou"]["gara_const"]["corrupt"] - m["iou"]["lora"]["corrupt"],
            "gara seen gain": m["gara_seen_gain"], "lora seen gain": m["controls"]["seen_gain_lora"],
            "gara rank max/min": m["gara_rank_max_over_min"], "gara clean drop": m["gara_clean_drop"],
            "lora clean drop": m["controls"]["clean_drop_lora"], "gara-lora clean": m["gara_minus_lora_clean"],
            "gara unseen gain": m["gain_over_frozen"]["gara"]["unseen"]["mean"],
            "gara-const corrupt": m["gara_minus_const_corrupt"]}
        print(f"seed {seed}: IoU clean/seen/unseen/corrupt " + "; ".join(
            f"{arm} {m['iou'][arm]['clean']:.3f}/{m['iou'][arm]['seen']:.3f}/{m['iou'][arm]['unseen']:.3f}/"
            f"{m['iou'][arm]['corrupt']:.3f}" for arm in m["iou"]), flush=True)
        if full_iou is not None:
            print(f"  full: clean {full_iou['clean'].mean():.3f}", flush=True)
        print("  " + ", ".join(f"{k} {v:+.4f}" for k, v in r.items()), flush=True)
    print("mean over seeds (sd):", flush=True)
    for k in next(iter(rows.values())):
        v = np.array([rows[s][k] for s in seeds])
        print(f"  {k}: {v.mean():+.4f} ({v.std(ddof=1) if len(v) > 1 else 0:.4f}); per seed "
              + " ".join(f"{x:+.4f}" for x in v), flush=True)
    print("CPU s: " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()) + f"; total {sum(cpu.values()):.1f}", flush=True)


if __name__ == "__main__":
    main()
