"""webdancer calibration, on calibration seeds only (>= 1000, never a verdict seed): does the
must (SFT+RL beats the SFT cold start by >= +0.05 held-out Pass@1) see RL, or does SFT on the same
data do as well?

The study's own functions run each calibration seed as the pipeline runs a verdict seed
(prepare.build, train.train_seed, evaluate.seed_metrics), and the figures are judged as the
ledger judges them (stages.common.inference.judge: the 95 % one-sided t interval of the per-seed
mean against the threshold): the must's figure rl_gain.mean (SFT+RL - SFT) beside its control
equal_sft_gain.mean (SFT on the cold start's and the RL questions' trajectories - SFT), and the
shoulds' figures. ``--set key=JSON`` changes a param of the profile (e.g.
``--set prepare.n_sft=600``).

    nice -n 10 python benchmarks/webdancer/calibration.py [--seeds 1000,...] [--set prepare.n_sft=600]
    ``--smoke`` runs it at the smoke profile's sizes in seconds (what CI runs).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

FIGURES = (("rl_gain", ">=", 0.05), ("equal_sft_gain", ">=", 0.05), ("rl_over_equal_sft", ">", 0.0),
           ("coin_gain", "<", 0.05), ("cold_start_gain", ">=", 0.10))


def main() -> None:
    a, seeds = parse_seeds(seed_parser(__doc__, sets=True))
    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.webdancer.agent import split_data
    from stages.webdancer.evaluate import seed_metrics
    from stages.webdancer.params import PARAMS
    from stages.webdancer.prepare import build
    from stages.webdancer.train import train_seed
    from stages.webdancer.web import Layout

    limit_threads(1)
    p = study_params("webdancer", PARAMS, a)
    lay = Layout(p.env.k, p.env.depth, p.env.n_topics, p.env.n_values)
    per = {}
    for seed in seeds:
        t0 = time.process_time()
        data = build(p.env, p.prepare, seed)
        data.pop("_info")
        sites, qs, traj = split_data(data)
        pols, _, cpu = train_seed(lay, p.env, p.train, sites, qs, traj, seed)
        per[seed], _ = seed_metrics(lay, p.env, p.evaluate.level, sites, qs["test"], pols, seed)
        pa = per[seed]["pass1"]
        print(f"seed {seed}: Pass@1 random {pa['random']['all']:.3f}, SFT {pa['sft']['all']:.3f}, SFT+RL "
              f"{pa['sft_rl']['all']:.3f}, equal-data SFT {pa['sft_equal']['all']:.3f}, coin {pa['sft_rl_coin']['all']:.3f}, "
              f"RL scratch {pa['rl_scratch']['all']:.3f}; {time.process_time() - t0:.1f} CPU s "
              f"(RL {cpu['sft_rl']:.1f}, equal SFT {cpu['sft_equal']:.1f})", flush=True)
    for name, op, thr in FIGURES:
        vals = [per[s][name]["mean"] for s in seeds]
        j = judge(vals, op, thr)
        print(f"{name:18s} {op} {thr}: per seed {[round(v, 3) for v in vals]} -> {j.verdict} "
              f"(mean {j.mean:+.3f}, interval {j.interval})", flush=True)


if __name__ == "__main__":
    main()
