"""autosep calibration, on calibration seeds only (>= 1000, never a verdict seed): the stages' own
functions (stages/autosep/data.split, experiment.train_seed, experiment.evaluate_seed) on the
profile's sizes, for a few seeds; prints each must figure and its control arm's per seed, their
mean, interval and verdict by the ledger's rule (stages.common.inference.judge) against the
thresholds of stages/autosep/claims.yaml, and the CPU seconds.

    nice -n 19 python benchmarks/autosep/calibration.py [--seeds 1000,...] [--profile default]
    nice -n 19 python benchmarks/autosep/calibration.py --set train.blackbox.compare_noise=0.3   # the draft's noise
    nice -n 19 python benchmarks/autosep/calibration.py --set train.search.label_edit='"pair"'

``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    a, seeds = parse_seeds(ap)

    import numpy as np

    from stages.autosep.data import load, split
    from stages.autosep.experiment import evaluate_seed, train_seed
    from stages.autosep.params import PARAMS
    from stages.common.claims import load_claims
    from stages.common.inference import judge

    p = study_params("autosep", PARAMS, a)
    claims = {c.metric: c for c in load_claims(REPO / "stages/autosep/claims.yaml").claims
              if c.level == "must" and not c.retired}
    x, y = load()
    per_seed = {}
    for s in seeds:
        t0 = time.process_time()
        sp = split(y, s, p.prepare.pretrain_frac, p.prepare.n_unlabelled, p.prepare.repeats)
        found = train_seed(x, y, sp, p.train, s)["prompts"]
        per_seed[s] = evaluate_seed(x, y, sp, found, p.train, p.evaluate.n_random, s)
        m = per_seed[s]
        print(f"seed {s} ({time.process_time() - t0:.1f} CPU s): accuracy " + " ".join(
            f"{k} {v:.3f}" for k, v in m["accuracy"].items()) + f"; best baseline {m['best_baseline']}", flush=True)
    print(f"profile {a.profile}, sets {a.set or 'none'}, seeds {seeds}")
    for metric, c in claims.items():
        arm = c.control.split(".")[1] if c.control else None
        own = [per_seed[s][metric] for s in seeds]
        j = judge(own, c.op, c.threshold, c.rule)
        line = (f"  {c.id} ({metric} {c.op} {c.threshold}): " + " / ".join(f"{v:+.2f}" for v in own)
                + f"; mean {j.mean:+.2f} interval {tuple(round(v, 2) for v in j.interval or ())} {j.verdict}")
        if arm:
            ctl = [per_seed[s]["controls"][arm][metric] for s in seeds]
            jc = judge(ctl, c.op, c.threshold, c.rule)
            line += (f"\n    control {arm}: " + " / ".join(f"{v:+.2f}" for v in ctl)
                     + f"; mean {jc.mean:+.2f} interval {tuple(round(v, 2) for v in jc.interval or ())} {jc.verdict}")
        print(line)
    for key in ("gap_true_label_pp",):
        print(f"  {key}: " + " / ".join(f"{per_seed[s][key]:+.2f}" for s in seeds)
              + f"; mean {np.mean([per_seed[s][key] for s in seeds]):+.2f}")
    for arm, key in (("finer_look", "gain_zero_shot_pp"), ("strong_generic", "gain_generic_pp")):
        print(f"  {arm} {key}: " + " / ".join(f"{per_seed[s]['controls'][arm][key]:+.2f}" for s in seeds))


if __name__ == "__main__":
    main()
