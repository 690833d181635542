"""Why the first stand-in (no entity states, no pointer term) did not learn TSP-10: the ladder
(random tour, nearest neighbour) and SFT on TSP alone with that model (3 encoder layers, d = 64)
and with the architecture variants tried then (rotary positions, previous-token embedding,
GPT-style small embedding init), and with the entity states and pointer term the study now uses
(``entities_pointer``): greedy / sampled / best-of-4 gaps on 100 test instances and the loss
curve (means of 50 steps every 200).

    nice -n 19 python -m benchmarks.llm_co_foarl.tsp_diagnosis ladder
    nice -n 19 python -m benchmarks.llm_co_foarl.tsp_diagnosis base 600 0.001
    nice -n 19 python -m benchmarks.llm_co_foarl.tsp_diagnosis init_rope_shift 2000 0.002
    nice -n 19 python -m benchmarks.llm_co_foarl.tsp_diagnosis entities_pointer 600 0.001

Calibration seeds only: the model's seed ``--seed`` and the instances' ``--data-seed`` are >= 1000
(default 1000 both; the default profile's sizes, solved by OR-Tools here, ``--cache FILE`` keeps
them). The README's figures from before the claims contract v2 were measured with this script's
earlier version on the default data set of seed 0 (git log of this file). ``--smoke`` runs it at
tiny sizes in seconds (what CI runs): a few TSP-5 instances, the ladder, then 2 SFT steps of the
init_rope_shift variant.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import seed_parser  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = seed_parser(__doc__.splitlines()[0])
    ap.add_argument("variant", nargs="?", help="ladder, or the model variant (base, init_rope_shift, ...)")
    ap.add_argument("steps", nargs="?", type=int, help="SFT steps (not for ladder)")
    ap.add_argument("lr", nargs="?", type=float, help="SFT learning rate (not for ladder)")
    ap.add_argument("--seed", type=int, default=1000, help="the model's and SFT's seed (>= 1000)")
    ap.add_argument("--data-seed", type=int, default=1000, help="draws the instances (>= 1000)")
    ap.add_argument("--cache", default="", help="a JSON file keeping the solved instances")
    a = ap.parse_args(argv)
    if min(a.seed, a.data_seed) < 1000:
        raise SystemExit("benchmarks use calibration seeds >= 1000 only (the verdict seeds are below 1000)")
    if a.smoke:
        smoke()
    elif a.variant is None:
        ap.error("the following arguments are required: variant")
    elif a.variant != "ladder" and (a.steps is None or a.lr is None):
        ap.error(f"{a.variant}: give the SFT steps and the learning rate")
    else:
        from benchmarks.llm_co_foarl.calibration import calibration_data
        from stages.common.runtime.params import load_study
        from stages.llm_co_foarl.params import PARAMS

        prep = load_study("llm_co_foarl", PARAMS, profile="default")[1].prepare
        diagnose(calibration_data(prep, a.data_seed, a.cache)["tsp"], a.variant, a.steps, a.lr, a.seed)


def smoke() -> None:
    """The ladder and a two-step variant on 6 train + 3 test TSP-5 instances solved by the study's
    own ``core.with_optima``."""
    from stages.llm_co_foarl import core

    rng = np.random.default_rng(1000)
    solved = core.with_optima("tsp", core.make_instances("tsp", 5, 9, rng), 1)
    print("smoke: 6 train + 3 test TSP-5 instances, the figures mean nothing", flush=True)
    data = {"train": solved[:6], "test": solved[6:]}
    diagnose(data, "ladder", None, None, 1000)
    diagnose(data, "init_rope_shift", 2, 0.001, 1000)


def diagnose(tsp: dict, variant: str, steps: int | None, lr: float | None, seed: int) -> None:
    import torch

    from stages.common.device import limit_threads
    from stages.llm_co_foarl import core
    from stages.llm_co_foarl import problems as P
    from stages.llm_co_foarl.ladder import heuristic_gaps

    limit_threads(1)
    tr, te = tsp["train"], tsp["test"]
    if variant == "ladder":
        for r in te:   # the labels: each stored tour has the stored optimal length
            assert abs(P.tour_length(np.array(r["pts"]), r["tour"]) - r["opt"]) < 1e-9
        print({k: round(100 * v, 1) for k, v in heuristic_gaps("tsp", te, np.random.default_rng(seed)).items()})
        return
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    m = core.make_model(SimpleNamespace(d_model=64, heads=4, enc_layers=3, dec_layers=2, rope="rope" in variant,
                                        shift="shift" in variant, small_init="init" in variant,
                                        entities="entities" in variant, pointer="pointer" in variant))
    curve: list = []
    t = time.process_time()
    cpu = core.train_sft(m, {"tsp": tr}, steps, 32, lr, rng, curve=curve)
    r = core.evaluate(m, te[:100], "tsp", len(tr[0]["pts"]), 4, seed)
    print([round(float(np.mean(curve[i:i + 50])), 3) for i in range(0, len(curve), 200)])
    print(variant, steps, lr, f"SFT {cpu:.0f} s CPU, loss {np.mean(curve[-20:]):.3f}",
          {k: (v["feasible_rate"], round(100 * v["gap_feasible"], 1)) for k, v in r.items()},
          f"total {time.process_time() - t:.0f} s CPU")


if __name__ == "__main__":
    main()
