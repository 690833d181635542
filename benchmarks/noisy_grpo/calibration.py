"""noisy_grpo calibration, on calibration seeds only (>= 1000, never a verdict seed).

    nice -n 10 python benchmarks/noisy_grpo/calibration.py [--design study|prototype] [--seeds 1000,...]
    nice -n 10 python benchmarks/noisy_grpo/calibration.py --sft-gap      # the SFT gap of run A
    --smoke: the smoke profile's sizes and two seeds, in seconds (what CI runs).

Designs (each seed runs the whole experiment: its data, SFT, then every RL method from that SFT
policy, with the study's own functions, stages.noisy_grpo.core.make_dataset / train_seed /
evaluate_seed):

* ``study``: the default profile of stages/noisy_grpo/params.json as the verdict run runs it;
* ``prototype``: the configuration the first version of this script ran when the claims'
  margins (+0.02 OOD, 0.03 ID) were fixed on 2026-12-05, on seed 0 then (its printout was not
  kept): 1 replicate, 150 RL steps, the noise annealed 0.6 -> 0.2, OOD pixel noise 0.25, the
  update scored on the noisy view.

Prints per seed: SFT, GRPO and NoisyGRPO accuracies, the must's figure (NoisyGRPO - GRPO OOD, paired
over the test instances), its control's (Bayes-only - GRPO OOD: the Bayesian advantage without
noise, equal to GRPO's advantage), the ID loss and its control, and the verdicts of the interval
rule (stages.common.inference.judge) over the seeds with the registered thresholds.

``--sft-gap``: SFT only, with the SFT chains of the current code and of the first version (misread
clipped into [0, max], before commit 03f98c8): chains right and SFT accuracy per seed.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # run by path: the repository first

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

PROTOTYPE = {"train.rl_steps": 150, "train.replicates": 1, "train.sigma_end": 0.2, "prepare.ood_pixel_noise": 0.25}
CHECKS = {  # claim: (metric, control, op, threshold), as registered in stages/noisy_grpo/claims.yaml
    "noisy_grpo_beats_grpo_ood": ("noisy_grpo_ood_gain", "bayes_only_ood_gain", ">=", 0.02),
    "noisy_grpo_not_worse_id": ("id_loss", "bayes_only_id_loss", "<=", 0.03),
    "bayes_adds_to_noise": ("noisy_over_noise_only_ood", None, ">=", 0.0),
}


def sft_gap(seeds, pp, p) -> None:
    import numpy as np
    import torch

    from stages.noisy_grpo import core

    T = torch.as_tensor
    for seed in seeds:
        line = []
        for name, clipped in (("current", False), ("first version (clipped)", True)):
            rng = np.random.default_rng([seed, 0])          # as core.make_dataset draws
            img, cnt, q = core.make_images(pp.n_train, pp.grid, pp.max_per_colour, rng)
            ch = core.noisy_chains(cnt, q, pp.p_wrong, pp.max_per_colour, rng, clipped=clipped)
            ti, tc, tq = core.make_images(pp.n_test, pp.grid, pp.max_per_colour, rng)
            torch.manual_seed(seed)
            pol = core.Policy(pp.grid, pp.max_per_colour + 1, d_model=p.d_model)
            gen = torch.Generator().manual_seed(seed)
            core.sft(pol, T(img), T(q), T(ch), p.sft_steps, p.sft_batch, p.sft_lr, gen)
            acc = core.correct(pol.eval(), T(ti), T(tq), T(tc), gen).mean()
            right = (ch == core.true_chain(cnt, q)).all(1).mean()
            line.append(f"{name}: chains right {right:.3f}, SFT ID acc {acc:.3f}")
        print(f"seed {seed}: " + "; ".join(line), flush=True)


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--design", choices=("study", "prototype"), default="study")
    ap.add_argument("--sft-gap", action="store_true")
    a, seeds = parse_seeds(ap)
    if a.design == "prototype" and not a.smoke:
        a.set = [f"{k}={v}" for k, v in PROTOTYPE.items()] + a.set

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.noisy_grpo import core
    from stages.noisy_grpo.params import PARAMS

    limit_threads(1)
    prm = study_params("noisy_grpo", PARAMS, a)
    pp, p = prm.prepare, prm.train
    if a.sft_gap:
        sft_gap(seeds, pp, p)
        return
    print(f"design {a.design}, profile {a.profile}, seeds {seeds}: {p.rl_steps} RL steps, {p.replicates} "
          f"replicate(s), sigma {p.sigma_start} -> {p.sigma_end}, OOD pixel noise {pp.ood_pixel_noise}", flush=True)
    res = {}
    for seed in seeds:
        t0 = time.process_time()
        d = core.make_dataset(seed, pp)
        states, _, _ = core.train_seed(seed, d, pp, p, progress=False, score_on_noisy=a.design == "prototype")
        r = res[seed] = core.evaluate_seed(states, d, pp, p, prm.evaluate.level)
        print(f"seed {seed} ({time.process_time() - t0:.1f}s CPU): SFT {r['sft_id_acc']:.3f}/{r['sft_ood_acc']:.3f}"
              f"  GRPO {r['grpo_id_acc']:.3f}/{r['grpo_ood_acc']:.3f}  NoisyGRPO {r['noisy_grpo_id_acc']:.3f}/"
              f"{r['noisy_grpo_ood_acc']:.3f} (ID/OOD)  OOD gain {r['noisy_grpo_ood_gain']:+.3f} (control "
              f"{r['bayes_only_ood_gain']:+.3f})  ID loss {r['id_loss']:+.3f} (control {r['bayes_only_id_loss']:+.3f})"
              f"  noisy - noise only OOD {r['noisy_over_noise_only_ood']:+.3f}", flush=True)
    for cid, (metric, control, op, thr) in CHECKS.items():
        for what, key in (("claim", metric), ("control", control)):
            if key is None:
                continue
            v = [res[s][key] for s in seeds]
            j = judge(v, op, thr)
            print(f"{cid} {what} {key}: mean {np.mean(v):+.4f} interval {tuple(round(x, 4) for x in j.interval)} "
                  f"{op} {thr}: {j.verdict}", flush=True)


if __name__ == "__main__":
    main()
