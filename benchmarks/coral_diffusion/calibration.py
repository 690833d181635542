"""coral_diffusion calibration, on calibration seeds only (>= 1000, never a verdict seed): the
study's stages' own functions run each calibration seed as the pipeline runs a verdict seed
(digits.prepare_seed, ddpm.train_stacked over arms.training_jobs, evaluate.evaluate_stack), and
every claim's per-seed figure is judged as the ledger judges it (stages.common.inference.judge:
the 90 % t-interval of the per-seed mean against the threshold), beside its control (the same
figure of the ``shuffled`` arm: CORAL's term on labels shuffled over the training images):

* tail accuracy gain, CORAL - DDPM (the must) and shuffled - DDPM (its control);
* overlap drop, diversity gain, Fréchet drop (CORAL and control); the balanced-control figures.

    nice -n 10 python -m benchmarks.coral_diffusion.calibration [--seeds 1000,...] [--set train.coral_weight=0.2]
    ``--smoke`` runs it at the smoke profile's sizes in seconds (what CI runs).

``--set key=JSON`` changes a param of the profile (dotted under it, e.g. ``train.class_in_encoder=true``)
to try a design on calibration seeds; the stages' params are not touched. Prints CPU seconds.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

# (figure, control figure or None, op): the claims' figures (stages/coral_diffusion/claims.yaml)
CHECKS = [("lt.tail_accuracy_gain", "lt.shuffled_tail_accuracy_gain"),
          ("lt.overlap_drop", "lt.shuffled_overlap_drop"),
          ("lt.tail_diversity_gain", "lt.shuffled_tail_diversity_gain"),
          ("lt.tail_frechet_drop", "lt.shuffled_tail_frechet_drop"),
          ("imbalance_overlap_excess", None), ("control_overlap_drop_shrink", None)]
CONTEXT = ["lt.ddpm.tail_accuracy", "lt.coral.tail_accuracy", "lt.shuffled.tail_accuracy", "lt.ddpm.overlap",
           "lt.coral.overlap", "lt.shuffled.overlap", "lt.ddpm.head_accuracy", "lt.coral.head_accuracy",
           "lt.shuffled.head_accuracy", "lt.ddpm.tail_coverage", "lt.coral.tail_coverage", "bal.ddpm.overlap",
           "bal.overlap_drop", "bal.tail_accuracy_gain"]


def run(p, seeds: list[int], progress: bool = True) -> tuple[dict, dict]:
    """({seed: the evaluate stage's figures}, CPU seconds by phase) for ``seeds`` at params ``p``."""
    from tqdm import tqdm

    from stages.coral_diffusion import digits
    from stages.coral_diffusion.arms import jobs_of, training_jobs
    from stages.coral_diffusion.ddpm import model_config, train_stacked
    from stages.coral_diffusion.evaluate import evaluate_stack

    cpu = {}
    t0 = time.process_time()
    x, y = digits.load()
    prepared = {s: digits.prepare_seed(x, y, p.prepare, s) for s in seeds}
    data, clfs = {s: v[0] for s, v in prepared.items()}, {s: v[1] for s, v in prepared.items()}
    cpu["prepare"] = time.process_time() - t0
    tp = p.train
    with tqdm(total=tp.steps, desc="train", mininterval=5, disable=not progress) as bar:
        P, _, _ = train_stacked(training_jobs(data, seeds), T=tp.T, hidden=tp.hidden, bottleneck=tp.bottleneck,
                                proj=tp.proj, label_init=tp.label_init, class_in_encoder=tp.class_in_encoder,
                                steps=tp.steps, batch=tp.batch, lr=tp.lr, coral_weight=tp.coral_weight,
                                temperature=tp.temperature, time_scale=tp.time_scale, progress=bar.update)
    cpu["train"] = time.process_time() - t0 - cpu["prepare"]
    with tqdm(desc="sample", mininterval=5, disable=not progress) as bar:
        results, _, _ = evaluate_stack(P, jobs_of(seeds), data, clfs, p.evaluate,
                                       model_config(tp, p.evaluate.sample_steps), progress=bar.update)
    cpu["evaluate"] = time.process_time() - t0 - cpu["prepare"] - cpu["train"]
    return results, cpu


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    a, seeds = parse_seeds(ap)

    from stages.common.claims import lookup
    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.coral_diffusion.params import PARAMS

    limit_threads(1)
    p = study_params("coral_diffusion", PARAMS, a)
    results, cpu = run(p, seeds)

    def per_seed(k):
        return [float(lookup(results[s], k)) for s in seeds]

    print(f"\nprofile {a.profile} {' '.join(a.set)}; calibration seeds {seeds}; CPU s "
          + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()) + f" (total {sum(cpu.values()):.1f})")
    print("figure (> 0 is the paper's direction): per seed, mean, 90% interval -> verdict")
    for fig, ctl in CHECKS:
        for label, k in (("", fig), ("  control ", ctl)):
            if k is None:
                continue
            v = per_seed(k)
            j = judge(v, ">", 0.0, "interval")
            print(f"  {label}{k:38s} [{', '.join(f'{x:+.3f}' for x in v)}] mean {j.mean:+.3f} "
                  f"[{j.interval[0]:+.3f}, {j.interval[1]:+.3f}] -> {j.verdict}")
    print("context, per seed:")
    for k in CONTEXT:
        print(f"  {k:38s} [{', '.join(f'{x:.3f}' for x in per_seed(k))}]")


if __name__ == "__main__":
    main()
