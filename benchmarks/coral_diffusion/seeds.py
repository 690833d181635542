"""coral_diffusion: the verdict seeds' models as one stack (as the stages run them) vs one model
after another.

    nice -n 10 python -m benchmarks.coral_diffusion.seeds [--seeds 1000,...] [--steps N] [--per-class N]
    ``--smoke``: the smoke profile's sizes and two seeds, in seconds (what CI runs).

Every seed trains five small DDPMs (stages/coral_diffusion/arms.py) and samples ``per_class``
images a class from each. The stages put every model of every seed into one stack (ddpm.train_stacked,
ddpm.sample_stacked: a leading model dimension and batched matrix products); the other way is one
model after another (a stack of one, in the same process: the old one-seed stage's loop, times the
seeds). The stages sample in groups of ``evaluate.MODELS_PER_CALL`` models (one seed's five): with
2000 images a model, one stack of 25 sampled slower than one model after another. The script times both (CPU seconds, one thread), prints the ratio, and checks that every
model's final weights and samples are the same bit for bit either way (a model's numbers do not
depend on what else is in the stack, so a seed's figures depend on that seed alone). ``--steps``
shortens training for the measurement (the cost per step does not depend on the step count).
Calibration seeds only (>= 1000): never a verdict seed.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--steps", type=int, default=300, help="training steps per model (default 300)")
    ap.add_argument("--per-class", type=int, default=None, help="samples a class (default: the profile's)")
    a, seeds = parse_seeds(ap, steps=20)

    import numpy as np
    import torch

    from stages.common.device import limit_threads
    from stages.coral_diffusion import digits
    from stages.coral_diffusion.arms import jobs_of, noise_seed, training_jobs
    from stages.coral_diffusion.ddpm import sample_stacked, train_stacked
    from stages.coral_diffusion.evaluate import MODELS_PER_CALL
    from stages.coral_diffusion.params import PARAMS

    limit_threads(1)
    p = study_params("coral_diffusion", PARAMS, a)
    tp, ep = p.train, p.evaluate
    per_class = a.per_class or ep.per_class
    x, y = digits.load()
    data = {s: digits.prepare_seed(x, y, p.prepare, s)[0] for s in seeds}
    jobs, names = training_jobs(data, seeds), jobs_of(seeds)
    kw = dict(T=tp.T, hidden=tp.hidden, bottleneck=tp.bottleneck, proj=tp.proj, label_init=tp.label_init,
              class_in_encoder=tp.class_in_encoder, steps=a.steps, batch=tp.batch, lr=tp.lr,
              coral_weight=tp.coral_weight, temperature=tp.temperature, time_scale=tp.time_scale)
    labels = np.repeat(np.arange(10), per_class)
    noise = [noise_seed(s, 2) for s, _, _ in names]
    sk = dict(T=tp.T, sample_steps=ep.sample_steps, class_in_encoder=tp.class_in_encoder)

    c0 = time.process_time()
    alone = [train_stacked([j], **kw)[0] for j in jobs]
    c1 = time.process_time()
    gen_alone = [sample_stacked(P, labels, [n], **sk)[0] for P, n in zip(alone, noise)]
    c2 = time.process_time()
    stack = train_stacked(jobs, **kw)[0]
    c3 = time.process_time()
    gen_stack = sample_stacked(stack, labels, noise, models_per_call=MODELS_PER_CALL, **sk)
    c4 = time.process_time()

    same_w = all(torch.equal(stack[k][i], alone[i][k][0]) for i in range(len(jobs)) for k in stack)
    same_x = all(np.array_equal(gen_stack[i], gen_alone[i]) for i in range(len(jobs)))
    seq_t, seq_s, bat_t, bat_s = c1 - c0, c2 - c1, c3 - c2, c4 - c3
    print(f"profile {a.profile}, calibration seeds {seeds}: {len(jobs)} models, {a.steps} training steps each, "
          f"{len(labels)} samples each ({ep.sample_steps} sampler steps); CPU seconds, one thread")
    print(f"  one model after another: train {seq_t:.1f}, sample {seq_s:.1f}, total {seq_t + seq_s:.1f}")
    print(f"  one stack (the stages):  train {bat_t:.1f}, sample {bat_s:.1f}, total {bat_t + bat_s:.1f}")
    print(f"  ratio stack / one after another: train {bat_t / seq_t:.2f}, sample {bat_s / seq_s:.2f}, "
          f"total {(bat_t + bat_s) / (seq_t + seq_s):.2f}")
    print(f"  every model's weights and samples the same bit for bit both ways: {same_w and same_x}")
    if not (same_w and same_x):
        raise SystemExit("a model's numbers differ between the stack and alone: a seed's figures would depend "
                         "on the other seeds")


if __name__ == "__main__":
    main()
