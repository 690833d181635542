"""mnl_assortment seeds as an axis: the train stage's runs of five seeds in one batch (the seeds'
runs and offline instances side by side: ``train.simulate`` of every seed) against one seed after
another in the same process (a batch of 4 arms x radii x runs per seed: ``train.simulate_seeds``,
what the stage runs), on calibration seeds only (>= 1000).

    nice -n 10 python -m benchmarks.mnl_assortment.seeds [--seeds 1000,...] [--profile default] [--horizon 2000]

It times both in CPU seconds (process time), checks that every run's regrets, final estimate and
region distances are the same bit for bit either way (a seed's figures depend on that seed
alone), and prints the times and their ratio. The offline sweep is batched the same way and
timed with it unless ``--no-offline``.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--horizon", type=int, default=0, help="rounds per run (0: the profile's)")
    ap.add_argument("--no-offline", action="store_true")
    a, seeds = parse_seeds(ap)

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study, read_params
    from stages.mnl_assortment.env import offline_env, online_env
    from stages.mnl_assortment.mnl import enumerate_assortments
    from stages.mnl_assortment.params import PARAMS
    from stages.mnl_assortment.train import simulate, simulate_seeds

    limit_threads()
    data = read_params(studies=["mnl_assortment"])
    if a.horizon:
        data["mnl_assortment"][a.profile]["prepare"]["horizon"] = a.horizon
    _, p = load_study("mnl_assortment", PARAMS, data, profile=a.profile)
    pp, tp = p.prepare, p.train
    A = enumerate_assortments(pp.n_items, pp.capacity)
    on_envs = {s: online_env(pp, s, A) for s in seeds}
    off_envs = {} if a.no_offline else {s: offline_env(pp, s, A) for s in seeds}
    offline = not a.no_offline

    c0 = time.process_time()
    together = simulate(pp, tp, seeds, on_envs, off_envs, A, progress=False, offline=offline)
    t_batch = time.process_time() - c0
    c0 = time.process_time()
    after = simulate_seeds(pp, tp, seeds, on_envs, off_envs, A, progress=False, offline=offline)
    t_apart = time.process_time() - c0

    same = True
    on = together["online"]
    def order(o):     # the two lay the runs out differently: compare run by run (seed, arm, radius, run)
        return np.lexsort((o["run_index"], o["run_radius"], o["run_method"], o["run_seed"]))

    i, j = order(on), order(after["online"])
    for key in ("regret", "theta", "region_h", "region_v", "run_method", "run_radius", "run_seed", "run_index"):
        same &= bool(np.array_equal(on[key][i], after["online"][key][j]))
    if offline:
        for rule, v in together["offline"]["suboptimality"].items():
            same &= bool(np.array_equal(v, after["offline"]["suboptimality"][rule]))
    runs = int(on["regret"].shape[0])
    print(f"profile {a.profile}: {len(seeds)} calibration seeds x {len(on['arms'])} arms x {len(pp.radii)} radii x "
          f"{pp.runs} runs = {runs} online runs of {on['regret'].shape[1]} rounds"
          + (f"; offline {pp.offline_instances} instances x {pp.offline_reps} data sets per seed and radius"
             if offline else ""))
    print("  every run's figures " + ("the same bit for bit in both ways" if same else "DIFFER between the ways"))
    print(f"  all seeds in one batch:                   {t_batch:.2f} CPU s")
    print(f"  one seed after another (the stage):       {t_apart:.2f} CPU s")
    print(f"  ratio one batch / one after another:      {t_batch / t_apart:.3f}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
