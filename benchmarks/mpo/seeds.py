"""mpo seeds as an axis: the fits the train stage makes, as members of stacked networks (what the
stage does: ``po.train_po_batch``, one batch per grid setting / ES generation / final test, seeds one
after another in one process) against the same fits one after another (``po.train_po``), on
calibration seeds only (>= 1000).

    nice -n 10 python benchmarks/mpo/seeds.py [--seeds 1000,1001] [--members 18]

It trains ``--members`` fits per seed (the grid of one setting on the validation draws: 9 losses x
2 draws at default size) both ways, prints the CPU seconds of each way and their ratio, and checks
that the policies agree (max difference of action probabilities on the draw's states).
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--members", type=int, default=18, help="fits per seed")
    a, seeds = parse_seeds(ap)

    import torch

    from stages.common.device import limit_threads
    from stages.mpo import experiment as ex
    from stages.mpo import po
    from stages.mpo.params import PARAMS

    limit_threads(1)
    prm = study_params("mpo", PARAMS, a)
    p, t = prm.prepare, prm.train
    grid = list(ex.baseline_grid(t).values())
    cpu_b = cpu_s = 0.0
    worst = 0.0
    for seed in seeds:
        ref = ex.build_reference(p, seed)
        data = ex.build_draws(p, ref, seed)
        keys = [f"flip{p.target_flip:g}/val{k}" for k in range(p.val_draws)]
        jobs = [(grid[i % len(grid)], keys[(i // len(grid)) % len(keys)]) for i in range(a.members)]
        prefs = [ex.get_prefs(data, k) for _, k in jobs]
        t0 = time.process_time()
        batch = po.train_po_batch(ref, prefs, [th for th, _ in jobs], p.hidden, t.steps, t.lr)
        cpu_b += time.process_time() - t0
        t0 = time.process_time()
        single = [po.train_po(ref, pr, th, p.hidden, t.steps, t.lr) for (th, _), pr in zip(jobs, prefs)]
        cpu_s += time.process_time() - t0
        with torch.no_grad():
            for pb, ps, pr in zip(batch, single, prefs):
                x = torch.from_numpy(pr.s)
                worst = max(worst, float((torch.softmax(pb(x), 1) - torch.softmax(ps(x), 1)).abs().max()))
        print(f"  seed {seed}: {a.members} fits of {t.steps} steps", flush=True)
    n = a.members * len(seeds)
    print(f"stacked members: {cpu_b:.2f} CPU s ({cpu_b / n * 1000:.0f} ms a fit); one after another: "
          f"{cpu_s:.2f} CPU s ({cpu_s / n * 1000:.0f} ms a fit)")
    print(f"batched / sequential = {cpu_b / cpu_s:.2f}; largest difference in action probability {worst:.1e}")
    if worst > 1e-3:
        raise SystemExit("the stacked fits differ from the single ones")


if __name__ == "__main__":
    main()
