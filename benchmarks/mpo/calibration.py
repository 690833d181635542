"""mpo calibration: the must checks at default size on a given seed, plus the controls where they
should fail (clean labels; low noise; a broken search that minimises the fitness).

    nice -n 19 python -m benchmarks.mpo.calibration [seed] [--broken] [--smoke] [key=value ...]

Prints the fit rate (policy-optimisation steps per CPU second) and the claim metrics.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile's sizes in place of
the default's (key=value still apply on top), bounds from 8 episodes."""
from __future__ import annotations

import json
import sys
import time


def main() -> None:
    import torch

    from stages.common.runtime.params import load_study
    from stages.mpo import experiment as ex
    from stages.mpo.params import PARAMS

    torch.set_num_threads(1)
    args = sys.argv[1:]
    seed = int(args[0]) if args and args[0].isdigit() else 0
    sign = -1.0 if "--broken" in args else 1.0
    common = {"profile": "default", "seeds": {"smoke": [0, 1], "default": [0, 1, 2, 3, 4], "paper": list(range(10))},
              "device": "cpu"}          # validated only; this script draws from `seed` itself
    raw = {"common": common, **json.load(open("stages/mpo/params.json"))}
    smoke = "--smoke" in args
    if smoke:
        raw["mpo"]["default"] = raw["mpo"]["smoke"]
        print("smoke: the smoke profile's sizes, the figures mean nothing", flush=True)
    for kv in [a for a in args if "=" in a]:
        k, v = kv.split("=")
        step, key = k.split(".")
        raw["mpo"]["default"][step][key] = json.loads(v)
    _, prm = load_study("mpo", PARAMS, raw, profile="default")
    p, t = prm.prepare, prm.train
    t0 = time.process_time()
    ref = ex.build_reference(p, seed)
    data = ex.build_draws(p, ref, seed)
    bounds = ex.score_bounds(seed, 8 if smoke else 64)
    sc = ex.Scorer(p, t, ref, data, seed, bounds)
    t1 = time.process_time()
    sc.train(ex.po.dpo(1.0), "flip0/val0")
    t2 = time.process_time()
    print(f"data {t1 - t0:.1f} s CPU; one fit {t.steps} steps: {t2 - t1:.2f} s CPU "
          f"({t.steps / (t2 - t1):.0f} steps/s); bounds {bounds}", flush=True)
    out = ex.run_all(sc, p, t, seed, progress=lambda m: print(" ", m, flush=True), sign=sign)
    m = ex.claim_metrics(out["results"], p.flips, p.target_flip)
    print(json.dumps({k: v for k, v in m.items() if k != "scores"}, indent=1))
    for s, row in m["scores"].items():
        print(s, " ".join(f"{k}={v:.3f}" for k, v in row.items()))
    print("discovered", {k: round(v, 3) for k, v in out["discovered"].items()})
    print(f"fits {out['fits']}; total {time.process_time() - t0:.1f} s CPU")


if __name__ == "__main__":
    main()
