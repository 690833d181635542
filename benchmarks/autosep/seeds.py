"""autosep seeds as an axis: the stages' work for several seeds in one process, one seed after
another (the stages' way: stages.common.seeds.run_seeds in the train and evaluate stages, the
imports, the digits and the process paid once), against one process per seed (as separate one-seed
runs pay it), on calibration seeds only (>= 1000).

    nice -n 19 python benchmarks/autosep/seeds.py [--seeds 1000,...] [--profile default]

Each seed's work is its split (stages/autosep/data.split), every prompt search
(experiment.train_seed) and every evaluation (experiment.evaluate_seed). There is no seed
dimension to batch: a beam search's next candidates depend on that seed's scores, so the seeds'
searches take different paths (numpy throughout, no model to stack). The script prints the CPU
seconds of each way (this process's, and its children's for the processes per seed), their ratio
one process / a process per seed, and checks that every seed's figures are the same both ways.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def run_one(x, y, p, seed: int) -> dict:
    """One seed's figures, as the stages compute them."""
    from stages.autosep.data import split
    from stages.autosep.experiment import evaluate_seed, train_seed

    sp = split(y, seed, p.prepare.pretrain_frac, p.prepare.n_unlabelled, p.prepare.repeats)
    found = train_seed(x, y, sp, p.train, seed)["prompts"]
    m = evaluate_seed(x, y, sp, found, p.train, p.evaluate.n_random, seed)
    return {"accuracy": m["accuracy"], "rho": m["rho"]}


def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--child", action="store_true", help="internal: run the one seed of --seeds and print its figures")
    a, seeds = parse_seeds(ap)

    if a.child:                       # one seed in its own process: print its figures as JSON
        from stages.autosep.data import load
        from stages.autosep.params import PARAMS

        p = study_params("autosep", PARAMS, a)
        x, y = load()
        print(json.dumps(run_one(x, y, p, seeds[0])))
        return

    t0 = time.process_time()
    from stages.autosep.data import load
    from stages.autosep.params import PARAMS

    p = study_params("autosep", PARAMS, a)
    x, y = load()
    one = {s: run_one(x, y, p, s) for s in seeds}
    cpu_one = time.process_time() - t0
    print(f"profile {a.profile}, seeds {seeds}: one process, one seed after another: {cpu_one:.1f} CPU s", flush=True)

    before = os.times()
    per = {}
    for s in seeds:
        out = subprocess.run([sys.executable, __file__, "--child", "--seeds", str(s), "--profile", a.profile],
                             check=True, capture_output=True, text=True)
        per[s] = json.loads(out.stdout.strip().splitlines()[-1])
    after = os.times()
    cpu_per = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    print(f"  a process per seed: {cpu_per:.1f} CPU s", flush=True)
    same = all(json.dumps(one[s], sort_keys=True) == json.dumps(per[s], sort_keys=True) for s in seeds)
    print(f"  ratio one process / a process per seed: {cpu_one / cpu_per:.3f}; every seed's figures the same "
          f"both ways: {same}", flush=True)
    if not same:
        raise SystemExit("a seed's figures differ between the two ways")


if __name__ == "__main__":
    main()
