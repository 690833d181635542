"""Why the stand-in does not learn TSP-10: the ladder (random tour, nearest neighbour) on the default
test set, and SFT on TSP alone with the default model and with the architecture variants tried
(rotary positions, previous-token embedding, GPT-style small embedding init), greedy / sampled /
best-of-4 gaps on 100 test instances and the loss curve (means of 50 steps every 200).

    nice -n 19 python -m benchmarks.llm_co_foarl_tsp_diagnosis ladder
    nice -n 19 python -m benchmarks.llm_co_foarl_tsp_diagnosis base 600 0.001
    nice -n 19 python -m benchmarks.llm_co_foarl_tsp_diagnosis init_rope_shift 2000 0.002

Needs data/llm_co_foarl/dataset.json from the default prepare stage (seed 0).
"""
from __future__ import annotations

import json
import sys
import time
from types import SimpleNamespace

import numpy as np


def main() -> None:
    import torch

    from stages.llm_co_foarl import core
    from stages.llm_co_foarl import problems as P
    from stages.llm_co_foarl.ladder import heuristic_gaps

    torch.set_num_threads(1)
    data = json.loads(open("data/llm_co_foarl/dataset.json").read())
    tr, te = data["tsp"]["train"], data["tsp"]["test"]
    if sys.argv[1] == "ladder":
        for r in te:   # the labels: each stored tour has the stored optimal length
            assert abs(P.tour_length(np.array(r["pts"]), r["tour"]) - r["opt"]) < 1e-9
        print({k: round(100 * v, 1) for k, v in heuristic_gaps("tsp", te, np.random.default_rng(0)).items()})
        return
    variant, steps, lr = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
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
