"""sepo calibration, on calibration seeds only (>= 1000): each seed's whole training
(:func:`stages.sepo.runs.run_seed`: pre-training, the released SEPO loss, its shuffled-reward
control, the re-derived variant, RWFT) and the figures the claims read
(:func:`stages.sepo.evaluate.seed_figures`), with the profile's params (``--set`` changes one),
CPU seconds by part, and the mean over the seeds.

    nice -n 10 python benchmarks/sepo/calibration.py [--seeds 1000,...] [--set train.sepo.steps=120]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def main() -> None:
    a, seeds = parse_seeds(seed_parser(__doc__, sets=True))

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.seeding import seed_everything
    from stages.sepo.dd import all_sequences, motif_reward
    from stages.sepo.evaluate import seed_figures
    from stages.sepo.params import PARAMS
    from stages.sepo.policy import ARMS
    from stages.sepo.prepare import seed_data
    from stages.sepo.runs import run_seed

    limit_threads(1)
    p = study_params("sepo", PARAMS, a)
    pp, e = p.prepare, p.evaluate
    reward = lambda s: motif_reward(s, pp.motif, pp.partial_weight)  # noqa: E731
    r_all = reward(all_sequences(pp.length))
    print(f"profile {a.profile}, seeds {seeds}: L={pp.length}; SEPO {p.train.sepo.model_dump()}", flush=True)
    keys = [f"{arm}.gain" for arm in ARMS] + [f"{arm}.final_kl" for arm in ARMS] + [
        f"{arm}.matched_kl.{b}.mean_gap" for arm in ARMS for b in ("rwft", "best_of_n", "tilt")]
    table = {k: [] for k in keys}
    cpu_total = 0.0
    for seed in seeds:
        seed_everything(seed)
        x, _, _ = seed_data(pp, seed)
        t0 = time.process_time()
        r = run_seed(x, pp.length, reward, r_all, p.train, seed, log=lambda m: print(m, flush=True))
        f, _, _ = seed_figures(r["p_pre"], r_all, r["curves"], e.best_of, e.tilt_betas)
        cpu = time.process_time() - t0
        cpu_total += cpu
        print(f"seed {seed}: pre-trained {f['pretrained']['exact_mean_reward']:.3f}; {cpu:.1f} CPU s ("
              + ", ".join(f"{k} {v:.1f}" for k, v in r["cpu"].items()) + ")", flush=True)
        for arm in ARMS:
            print(f"  {arm:17s} " + " ".join(f"{c['step']}:{c['kl']:.3f}/{c['reward']:.3f}" for c in r["curves"][arm]))
        print("  rwft              " + " ".join(f"{c['kl']:.3f}/{c['reward']:.3f}" for c in r["curves"]["rwft"]))
        for k in keys:
            v = f
            for part in k.split("."):
                v = v[part]
            table[k].append(v)
    print(f"mean over seeds {seeds} ({cpu_total:.1f} CPU s in all):")
    for k, v in table.items():
        vals = [np.nan if x is None else x for x in v]
        print(f"  {k:38s} mean {np.nanmean(vals):+.4f}  per seed " + " ".join(f"{x:+.4f}" for x in vals))


if __name__ == "__main__":
    main()
