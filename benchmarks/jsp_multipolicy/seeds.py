"""jsp_multipolicy seeds as an axis: the train stage's arms with every seed in one batch (a seed
dimension in the parameters, as the stage trains them) against one seed after another in the same
process, on calibration seeds only (>= 1000).

    nice -n 10 python -m benchmarks.jsp_multipolicy.seeds [--seeds 1000,...] [--steps 20] [--arms single,multi,blind,l2d]

For each arm it trains the seeds both ways for ``--steps`` steps (L2D: updates; the stage's sizes
otherwise, capped so the benchmark stays short), prints CPU seconds of both ways and their ratio,
and checks that every seed's trained parameters and training history are the same bit for bit
either way (a seed's figures depend on that seed alone). ``--smoke``: the smoke profile, two
seeds, in seconds (what CI runs).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--steps", type=int, default=20, help="training steps (L2D: updates) per arm, capped at the profile's")
    ap.add_argument("--arms", default="single,multi,blind,l2d")
    a, seeds = parse_seeds(ap, steps=3)

    import torch

    from stages.common.device import limit_threads
    from stages.jsp_multipolicy.l2d import train_l2d
    from stages.jsp_multipolicy.params import PARAMS
    from stages.jsp_multipolicy.policy import train_arm

    limit_threads(1)
    p = study_params("jsp_multipolicy", PARAMS, a)
    t = p.train
    kw = {k: getattr(t, k) for k in ("instances", "samples", "n_jobs", "n_machines", "hidden", "lr", "n_policies",
                                     "tau")}
    total = {"batched": 0.0, "one after another": 0.0}
    ok = True
    for arm in a.arms.split(","):
        if arm == "l2d":
            steps = min(a.steps, t.l2d.updates)

            def run(ss):
                return train_l2d(ss, updates=steps, episodes=t.l2d.episodes, n_jobs=t.n_jobs, n_machines=t.n_machines,
                                 kind="jssp", hidden=t.l2d.hidden, hidden_head=t.l2d.hidden_head, lr=t.l2d.lr)
        else:
            steps = min(a.steps, t.steps)

            def run(ss, arm=arm):
                return train_arm(arm, ss, steps=steps, kind="jssp", **kw)
        c0 = time.process_time()
        nets, hist = run(seeds)
        batched = time.process_time() - c0
        c0 = time.process_time()
        alone = [run([s]) for s in seeds]
        sequential = time.process_time() - c0
        same = all(all(torch.equal(x, y) for x, y in zip(nets[i].state_dict().values(),
                                                         alone[i][0][0].state_dict().values()))
                   and hist[s] == alone[i][1][s] for i, s in enumerate(seeds))
        ok &= same
        total["batched"] += batched
        total["one after another"] += sequential
        print(f"{arm}: {len(seeds)} seeds x {steps} steps: batched {batched:.2f} CPU s, one after another "
              f"{sequential:.2f} CPU s, ratio {batched / sequential:.2f}; every seed the same bit for bit: {same}",
              flush=True)
    print(f"all arms: batched {total['batched']:.2f} CPU s, one after another {total['one after another']:.2f} CPU s, "
          f"ratio {total['batched'] / total['one after another']:.2f}", flush=True)
    if not ok:
        raise SystemExit("a seed's training differs between batched and alone: its figures do not depend on its seed alone")


if __name__ == "__main__":
    main()
