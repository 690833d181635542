"""dyna_rend calibration, on calibration seeds only (>= 1000, never a verdict seed): the study's own
functions (prepare.splits, train.train_seed, evaluate.seed_figures) at the profile's sizes, with
``--set`` overrides, one seed after another; prints each seed's figures, the musts' and their
controls' verdicts over the seeds (the same judge as the ledger), and the CPU seconds per seed.

    nice -n 10 python benchmarks/dyna_rend/calibration.py [--seeds 1000,1001,...] \
        [--set train.pretrain_steps=600 --set train.finetune_steps=200 ...]

``--smoke`` runs it at the smoke profile's sizes with two seeds in seconds (what CI runs).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

# (name, metric, baseline, control, op, threshold): the musts as claims.yaml registers them
MUSTS = (("dynarend_beats_2d_pretraining", "success.dynarend.none", "best_2d.none", "success.dynarend_blind.none", ">", 0.0),
         ("pretraining_transfers", "claim.transfer_gain", None, "control.transfer_gain_blind", ">=", 0.10),
         ("pretext_future_learned", "claim.pretext_ratio", None, "control.pretext_ratio_shuffled_instruction", "<=", 0.9))


def run_seed(p, seed: int, progress: bool = False) -> dict:
    """One calibration seed end to end in memory: the figures evaluate writes for a seed."""
    from stages.dyna_rend.evaluate import CONDITIONS, seed_figures
    from stages.dyna_rend.loops import views_of
    from stages.dyna_rend.params import CAMERAS
    from stages.dyna_rend.prepare import splits
    from stages.dyna_rend.train import train_seed
    from stages.dyna_rend.world import Grid

    raw = splits(p.prepare, seed)

    def split(name):
        pre = f"{name}__"
        return views_of({k[len(pre):]: v for k, v in raw.items() if k.startswith(pre)}, CAMERAS)

    tr = p.train
    states, _ = train_seed(tr, Grid(*p.prepare.grid), split("pretrain"), split("demos"), seed, progress=progress)
    held = [c for c in CAMERAS if c not in tr.cams_in]
    tests = {c: split(f"test_{c}") for c in CONDITIONS}
    return seed_figures(states, tests, split("test_push"), Grid(*p.prepare.grid), tr, held, seed, p.evaluate.chunk)


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    a, seeds = parse_seeds(ap)

    from stages.common.claims import lookup
    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.dyna_rend.params import PARAMS

    limit_threads(1)
    p = study_params("dyna_rend", PARAMS, a)
    print(f"profile {a.profile}, calibration seeds {seeds}, overrides {a.set or 'none'}", flush=True)
    figs = {}
    for seed in seeds:
        t0 = time.process_time()
        f = figs[seed] = run_seed(p, seed)
        print(f"seed {seed} ({time.process_time() - t0:.1f} s CPU): success in distribution "
              + ", ".join(f"{arm} {s['none']:.3f}" for arm, s in f["success"].items())
              + f"; perturbed mean dynarend {f['perturbed_mean']['dynarend']:.3f} none {f['perturbed_mean']['none']:.3f}"
              + f"; pretext ratio dynarend {f['claim']['pretext_ratio']:.3f} (shuffled instruction "
              f"{f['control']['pretext_ratio_shuffled_instruction']:.3f}), recon3d {f['pretext']['recon3d']['ratio']:.3f}, "
              f"blind {f['control']['pretext_ratio_blind']:.3f}", flush=True)

    def values(key, base):
        return [lookup(figs[s], key) - (lookup(figs[s], base) if base else 0.0) for s in seeds]

    for name, metric, base, control, op, thr in MUSTS:
        own, ctl = values(metric, base), values(control, base)
        jo, jc = judge(own, op, thr, "interval"), judge(ctl, op, thr, "interval")
        print(f"{name}: {[round(v, 3) for v in own]} mean {jo.mean:.3f} interval {jo.interval} -> {jo.verdict}; "
              f"control {[round(v, 3) for v in ctl]} mean {jc.mean:.3f} -> {jc.verdict}", flush=True)


if __name__ == "__main__":
    main()
