"""purpcode seeds in one process: the stages run every verdict seed one after another in one
process with one bandit/sandbox cache (stages.common.seeds.run_seeds; a snippet's verdict does not
depend on the seed, and the ~200 distinct snippets recur across seeds), against each seed run
cold, as separate processes would (its own cache, bandit and the sandbox called afresh). The
models are tiny and GRPO's rollouts are already one batched forward per token; the seed loop
itself is not vectorised. Calibration seeds only (>= 1000).

    nice -n 19 python benchmarks/purpcode/seeds.py [--seeds 1000,...] [--profile default]

Prints each way's wall and CPU seconds (this process; bandit runs in it, the sandbox in child
processes, hence wall), the ratio shared / cold, and whether every claim figure is the same both
ways. ``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def main() -> None:
    a, seeds = parse_seeds(seed_parser(__doc__, sets=True))

    from stages.common.device import limit_threads
    from stages.common.seeding import seed_everything
    from stages.purpcode.evaluate import claim_figures, evaluate_models
    from stages.purpcode.oracle import Oracle
    from stages.purpcode.params import PARAMS
    from stages.purpcode.prepare import build
    from stages.purpcode.train import train_all

    limit_threads(1)
    p = study_params("purpcode", PARAMS, a)

    def new_oracle():
        return Oracle(tuple(p.prepare.skip), p.prepare.sandbox_timeout)

    def one(seed: int, oracle) -> dict:
        seed_everything(seed)
        dataset, _ = build(p.prepare, seed, oracle)
        models, _, _ = train_all(dataset, p.train, seed, progress=False, oracle=oracle)
        return claim_figures(evaluate_models(models, [tuple(q) for q in dataset["test"]], oracle,
                                             p.evaluate.samples, p.evaluate.temperature, seed + 1000))

    out, wall, cpu = {}, {}, {}
    for shared in (True, False):
        t0, c0 = time.perf_counter(), time.process_time()
        oracle = new_oracle()
        out[shared] = {s: one(s, oracle if shared else new_oracle()) for s in seeds}
        wall[shared], cpu[shared] = time.perf_counter() - t0, time.process_time() - c0
        print(f"  {'one process, shared cache' if shared else 'each seed cold':26s}: wall {wall[shared]:.1f} s, "
              f"CPU {cpu[shared]:.1f} s", flush=True)
    same = out[True] == out[False]
    print(f"profile {a.profile}, seeds {seeds}: ratio shared / cold: wall {wall[True] / wall[False]:.3f}, "
          f"CPU {cpu[True] / cpu[False]:.3f}; claim figures " + ("the same both ways" if same else "DIFFER"))
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
