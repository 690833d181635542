"""Why the stand-in does not learn TSP-10: the ladder (random tour, nearest neighbour) on the default
test set, and SFT on TSP alone with the default model and with the architecture variants tried
(rotary positions, previous-token embedding, GPT-style small embedding init), greedy / sampled /
best-of-4 gaps on 100 test instances and the loss curve (means of 50 steps every 200).

    nice -n 19 python -m benchmarks.llm_co_foarl.tsp_diagnosis ladder
    nice -n 19 python -m benchmarks.llm_co_foarl.tsp_diagnosis base 600 0.001
    nice -n 19 python -m benchmarks.llm_co_foarl.tsp_diagnosis init_rope_shift 2000 0.002

Needs data/llm_co_foarl/dataset.json from the default prepare stage (seed 0).
``--smoke`` runs it at tiny sizes in seconds (what CI runs): without that file, on a stand-in of a
few TSP-5 instances solved by CP-SAT into a temporary folder, the ladder and then 2 SFT steps of
the init_rope_shift variant.
"""
from __future__ import annotations

import argparse
import json
import time
from types import SimpleNamespace

import numpy as np

DATASET = "data/llm_co_foarl/dataset.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variant", nargs="?", help="ladder, or the model variant (base, init_rope_shift, ...)")
    ap.add_argument("steps", nargs="?", type=int, help="SFT steps (not for ladder)")
    ap.add_argument("lr", nargs="?", type=float, help="SFT learning rate (not for ladder)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        smoke()
    elif a.variant is None:
        ap.error("the following arguments are required: variant")
    elif a.variant != "ladder" and (a.steps is None or a.lr is None):
        ap.error(f"{a.variant}: give the SFT steps and the learning rate")
    else:
        diagnose(DATASET, a.variant, a.steps, a.lr)


def smoke() -> None:
    """The ladder and a two-step variant on a stand-in data set (6 train + 3 test TSP-5 instances
    solved by the study's own ``core.with_optima``), written to a temporary folder."""
    import tempfile
    from pathlib import Path

    from stages.llm_co_foarl import core

    rng = np.random.default_rng(0)
    solved = core.with_optima("tsp", core.make_instances("tsp", 5, 9, rng), 1)
    with tempfile.TemporaryDirectory(prefix="tsp_diagnosis_smoke_") as tmp:
        path = Path(tmp) / "dataset.json"
        path.write_text(json.dumps({"tsp": {"train": solved[:6], "test": solved[6:]}}))
        print(f"smoke: no {DATASET}; a stand-in of 6 train + 3 test TSP-5 instances, the figures mean nothing",
              flush=True)
        diagnose(path, "ladder", None, None)
        diagnose(path, "init_rope_shift", 2, 0.001)


def diagnose(path, variant: str, steps: int | None, lr: float | None) -> None:
    import torch

    from stages.llm_co_foarl import core
    from stages.llm_co_foarl import problems as P
    from stages.llm_co_foarl.ladder import heuristic_gaps

    torch.set_num_threads(1)
    data = json.loads(open(path).read())
    tr, te = data["tsp"]["train"], data["tsp"]["test"]
    if variant == "ladder":
        for r in te:   # the labels: each stored tour has the stored optimal length
            assert abs(P.tour_length(np.array(r["pts"]), r["tour"]) - r["opt"]) < 1e-9
        print({k: round(100 * v, 1) for k, v in heuristic_gaps("tsp", te, np.random.default_rng(0)).items()})
        return
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    m = core.make_model(SimpleNamespace(d_model=64, heads=4, enc_layers=3, dec_layers=2, rope="rope" in variant,
                                        shift="shift" in variant, small_init="init" in variant))
    curve: list = []
    t = time.process_time()
    cpu = core.train_sft(m, {"tsp": tr}, steps, 32, lr, rng, curve=curve)
    r = core.evaluate(m, te[:100], "tsp", len(tr[0]["pts"]), 4, 0)
    print([round(float(np.mean(curve[i:i + 50])), 3) for i in range(0, len(curve), 200)])
    print(variant, steps, lr, f"SFT {cpu:.0f} s CPU, loss {np.mean(curve[-20:]):.3f}",
          {k: (v["feasible_rate"], round(100 * v["gap_feasible"], 1)) for k, v in r.items()},
          f"total {time.process_time() - t:.0f} s CPU")


if __name__ == "__main__":
    main()
