"""jsp_multipolicy at the paper profile's training sizes on one GPU, for a lent machine without the
pipeline's stack (imports torch, numpy and the study's pure modules; OR-Tools only in
spawned CP-SAT workers). Trains the single (SLIM), the K-policy network and the L2D baseline for at
most --max-seconds each, solves the test shops with CP-SAT meanwhile (one worker process per core),
then prints steps/s, gaps to CP-SAT and the musts' figures (multi - L2D on 10x10 job and flow
shops, multi - single on 10x10: mean gap differences with paired t-intervals over the shops) and
writes them to --out (JSON). One seed (a calibration seed, >= 1000: never a verdict seed).

    python benchmarks/jsp_multipolicy/paper_gpu.py --device cuda --out paper_gpu.json
    python benchmarks/jsp_multipolicy/paper_gpu.py --tiny --device cpu --out /tmp/t.json   # seconds, CPU
    python benchmarks/jsp_multipolicy/paper_gpu.py --smoke

``--smoke`` runs it at tiny sizes in seconds (what CI runs): --tiny on the CPU, the JSON into a
temporary folder (removed afterwards) unless --out is given.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from stages.jsp_multipolicy.jsp import RULES, cpsat_solve, random_instances, rule_makespans  # noqa: E402
from stages.jsp_multipolicy import l2d  # noqa: E402
from stages.jsp_multipolicy.policy import best_of, train_arm  # noqa: E402
from stages.common.stats import t_interval  # noqa: E402  (numpy and scipy only, both on the GPU image)

SHAPES = {"g10": (10, 10, "jssp"), "g15": (15, 15, "jssp"), "flow": (10, 10, "flow")}   # as prepare.py
TINY = {"train": {"steps": 3, "instances": 2, "samples": 8, "n_jobs": 6, "n_machines": 6, "hidden": 16, "lr": 1e-3,
                  "n_policies": 4, "tau": 0.02, "l2d": {"updates": 3, "episodes": 4, "hidden": 16, "hidden_head": 8,
                                                        "lr": 3e-4}},
        "evaluate": {"samples": 8, "ci_level": 0.95}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--max-seconds", type=float, default=150.0, help="training wall time per network")
    ap.add_argument("--n-test", type=int, default=64, help="test shops per set (the paper profile has 100)")
    ap.add_argument("--cpsat-cap", type=float, default=5.0, help="cap on the profile's CP-SAT deterministic limits")
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--seed", type=int, default=1000, help="a calibration seed (>= 1000)")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes (a few seconds on CPU), for the test")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    ap.add_argument("--out", help="where the JSON goes (required unless --smoke)")
    a = ap.parse_args()
    if a.smoke:
        import tempfile

        a.tiny, a.device = True, "cpu"
        print("smoke: --tiny on the CPU, the figures mean nothing", flush=True)
        if a.out is None:
            with tempfile.TemporaryDirectory(prefix="paper_gpu_smoke_") as tmp:
                a.out = str(Path(tmp) / "paper_gpu.json")
                run(a)
            return
    elif a.out is None:
        ap.error("the following arguments are required: --out")
    if a.seed < 1000:
        raise SystemExit("benchmarks use calibration seeds >= 1000 only (the verdict seeds are below 1000)")
    run(a)


def run(a: argparse.Namespace) -> None:
    import numpy as np
    import torch

    torch.set_num_threads(1)
    prof = json.loads((ROOT / "stages/jsp_multipolicy/params.json").read_text())["jsp_multipolicy"]["paper"]
    if a.tiny:
        prof = {**prof, **TINY}
        a.n_test, a.cpsat_cap, a.workers = 3, 0.02, min(a.workers, 2)
    tr, ev, pr = prof["train"], prof["evaluate"], prof["prepare"]
    limits = {"g10": pr["cpsat_limit_10"], "g15": pr["cpsat_limit_15"], "flow": pr["cpsat_limit_flow"]}
    tests, items = {}, []
    for i, (key, (nj, nm, kind)) in enumerate(SHAPES.items()):
        tests[key] = random_instances(a.n_test, nj, nm, np.random.default_rng([a.seed, 0, i]), kind)
        items += [(M.tolist(), D.tolist(), min(limits[key], a.cpsat_cap)) for M, D in zip(*tests[key])]
    t0 = time.perf_counter()
    pool = mp.get_context("spawn").Pool(a.workers)
    pending = pool.map_async(cpsat_solve, items, chunksize=1)       # CP-SAT on the CPUs while the GPU trains
    out = {"device": a.device, "gpu": torch.cuda.get_device_name() if a.device.startswith("cuda") else None,
           "torch": torch.__version__, "tiny": a.tiny, "seed": a.seed, "train": tr, "evaluate": ev,
           "n_test": a.n_test, "max_seconds": a.max_seconds, "methods": {}, "sets": {}}
    kw = {k: tr[k] for k in ("steps", "instances", "samples", "n_jobs", "n_machines", "hidden", "lr", "n_policies",
                             "tau")}
    nets = {}
    for name in ("single", "multi", "l2d"):
        w0 = time.perf_counter()
        if name == "l2d":
            lp = tr["l2d"]
            got, hist = l2d.train_l2d([a.seed], updates=lp["updates"], episodes=lp["episodes"], n_jobs=tr["n_jobs"],
                                      n_machines=tr["n_machines"], kind="jssp", hidden=lp["hidden"],
                                      hidden_head=lp["hidden_head"], lr=lp["lr"], device=a.device,
                                      max_seconds=a.max_seconds, log_every=50)
        else:
            got, hist = train_arm(name, [a.seed], kind="jssp", device=a.device, max_seconds=a.max_seconds,
                                  log_every=50, **kw)
        nets[name], hist = got, hist[a.seed]
        if a.device.startswith("cuda"):
            torch.cuda.synchronize()
        wall, steps = time.perf_counter() - w0, hist[-1]["step"] + 1
        out["methods"][name] = {"steps": steps, "wall_s": wall, "steps_per_s": steps / wall,
                                "first_mean_makespan": hist[0]["mean_makespan"],
                                "last_mean_makespan": hist[-1]["mean_makespan"]}
        print(f"{name}: {steps} steps in {wall:.1f} s = {steps / wall:.2f} steps/s on {a.device}; train mean "
              f"makespan {hist[0]['mean_makespan']:.0f} -> {hist[-1]['mean_makespan']:.0f}", flush=True)
    solved = pending.get()
    pool.close()
    out["cpsat_wall_s"] = time.perf_counter() - t0
    for i, (key, (M, D)) in enumerate(tests.items()):
        res = solved[i * a.n_test:(i + 1) * a.n_test]
        ref = np.array([r["makespan"] for r in res], dtype=float)
        noise = [a.seed * 1000 + i]
        gaps = {name: 100 * (best_of(net, M, D, ev["samples"], noise, chunk=64)[0][0] / ref - 1)
                for name, net in nets.items() if name != "l2d"}
        if key != "g15":
            gaps["l2d"] = 100 * (l2d.sample_best(nets["l2d"], M, D, ev["samples"], noise, chunk=16,
                                                 device=a.device)[0] / ref - 1)
        gaps |= {r: 100 * (rule_makespans(M, D, r) / ref - 1) for r in RULES}
        diffs = {"multi_minus_single": gaps["multi"] - gaps["single"]}
        if "l2d" in gaps:
            diffs |= {"multi_minus_l2d": gaps["multi"] - gaps["l2d"], "single_minus_l2d": gaps["single"] - gaps["l2d"]}
        cis = {k: t_interval(v, ev["ci_level"]) for k, v in diffs.items()}
        out["sets"][key] = {"gap_mean": {k: float(g.mean()) for k, g in gaps.items()}, **cis,
                            "cpsat_optimal_fraction": float(np.mean([r["optimal"] for r in res])),
                            "cpsat_limit": min(limits[key], a.cpsat_cap)}
        print(f"{key}: " + "  ".join(f"{k} {g.mean():.2f}%" for k, g in gaps.items()) + "  " + "  ".join(
            f"{k} {c['mean']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]" for k, c in cis.items())
            + f"  (CP-SAT proved {out['sets'][key]['cpsat_optimal_fraction']:.0%} optimal)", flush=True)
    for name, (key, diff) in {"must_multi_beats_l2d_jssp10": ("g10", "multi_minus_l2d"),
                              "must_multi_beats_l2d_flow10": ("flow", "multi_minus_l2d"),
                              "must_multi_beats_single_10x10": ("g10", "multi_minus_single")}.items():
        c = out["sets"][key][diff]
        out[name] = {**c, "below_zero": c["high"] < 0}
        print(f"{name} (one seed, interval over the shops): {c['mean']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]",
              flush=True)
    print(f"total {time.perf_counter() - t0:.0f} s", flush=True)
    Path(a.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
