"""mtl_kd at the paper profile's sizes on one GPU, for a bounded time: three RL teachers (CVRP,
OVRP, VRPTW) and the distilled multi-task student at n=100 with the paper profile's nets, each
stopped after its share of ``--max-seconds`` (teachers 60 % together, student 40 %); then gaps
to PyVRP's HGS (a short time limit per instance, on the CPU cores) on the seen variants and the
unseen OVRPTW, R3C, and the three must checks' figures. Prints steps/s and writes a JSON.

Needs only torch, numpy, pyvrp and stages/mtl_kd's pure modules (vrp, models, baseline);
no stage.py, MLflow, DVC or pydantic. Sizes come from stages/mtl_kd/params.json.
  python benchmarks/mtl_kd/paper_gpu.py --device cuda --out mtl_kd_gpu.json     # the H200 check
  python benchmarks/mtl_kd/paper_gpu.py --tiny --device cpu --out /tmp/x.json   # seconds, CPU
  python benchmarks/mtl_kd/paper_gpu.py --smoke   # --smoke runs it at tiny sizes in seconds (what CI runs)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from stages.mtl_kd import baseline, models, vrp

TINY = {"prepare": {"n": 8, "test_count": 4, "seen": ["cvrp", "ovrp", "vrptw"], "unseen": ["ovrptw"]},
        "train": {"teacher": {"dim": 16, "layers": 1, "heads": 2, "steps": 3, "batch": 4, "lr": 1e-3},
                  "student": {"dim": 16, "layers": 1, "heads": 2, "steps": 3, "batch": 4, "lr": 1e-3,
                              "states_per_variant": 32}},
        "evaluate": {"r3c_rounds": 2, "r3c_segment": 0.5}}


def paper_profile() -> dict:
    return json.loads((ROOT / "stages/mtl_kd/params.json").read_text())["mtl_kd"]["paper"]


def hgs(job):
    """PyVRP's HGS on one instance for ``seconds``: (float cost of its routes, feasible)."""
    inst, seconds, seed = job
    from pyvrp.stop import MaxRuntime

    best = baseline.build_model(inst, 0).solve(MaxRuntime(seconds), seed=seed, display=False,
                                                 collect_stats=False).best
    routes = [[int(a.idx) + 1 for a in r if a.is_client()] for r in best.routes()]
    return vrp.route_cost(inst, 0, routes), bool(best.is_feasible() and not vrp.check_solution(inst, 0, routes, 1e-3))


def solve_chunked(net, inst, chunk):
    costs, routes = [], []
    for s in range(0, len(inst["demand"]), chunk):
        c, r = models.solve(net, vrp.take(inst, slice(s, s + chunk)))
        costs.append(c)
        routes += r
    return np.concatenate(costs), routes


def main(argv=None) -> dict:
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--max-seconds", type=float, default=150.0, help="training wall time, all models together")
    ap.add_argument("--test-count", type=int, default=64, help="test instances per variant (paper profile: 1000)")
    ap.add_argument("--hgs-seconds", type=float, default=1.0, help="HGS time limit per instance")
    ap.add_argument("--r3c-rounds", type=int, default=20, help="R3C rounds (paper profile: 100)")
    ap.add_argument("--eval-chunk", type=int, default=32, help="instances per inference batch")
    ap.add_argument("--workers", type=int, default=min(16, os.cpu_count() or 1), help="HGS processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tiny", action="store_true", help="toy sizes, a few seconds on CPU (the test)")
    ap.add_argument("--smoke", action="store_true",
                    help="tiny sizes: checks the script still runs (CI); --tiny on the CPU, the JSON in a temporary "
                         "folder unless --out is given")
    ap.add_argument("--out", required="--smoke" not in argv)
    a = ap.parse_args(argv)
    if a.smoke:
        import tempfile                       # here, not at the top: the GPU machine's imports stay as they are

        a.tiny, a.device = True, "cpu"
        if a.out is None:
            with tempfile.TemporaryDirectory(prefix="mtl_kd_smoke_") as tmp:
                return main([*argv, "--out", str(Path(tmp) / "smoke.json")])
        print("smoke: --tiny sizes on the CPU (figures meaningless)", flush=True)
    prof = TINY if a.tiny else paper_profile()
    if a.tiny:
        a.test_count, a.hgs_seconds, a.workers = 4, 0.05, 1
    pp, pt = prof["prepare"], prof["train"]
    n, seen, unseen = pp["n"], pp["seen"], pp["unseen"]
    rounds = min(a.r3c_rounds, prof["evaluate"]["r3c_rounds"])
    segment = max(2, round(prof["evaluate"]["r3c_segment"] * n))
    device = torch.device(a.device)
    if device.type == "cpu":                       # the house's CPU setting; imported here, so a GPU run
        from stages.common.device import limit_threads  # needs no threadpoolctl or scipy

        limit_threads(1)

    # test sets (prepare's streams) and HGS references, on the CPU cores before CUDA starts
    t0 = time.perf_counter()
    sets = {v: vrp.generate(v, n, a.test_count, np.random.default_rng([a.seed, 1, k, n]))
            for k, v in enumerate(seen + unseen)}
    jobs = [(vrp.take(inst, [i]), a.hgs_seconds, a.seed) for inst in sets.values() for i in range(a.test_count)]
    if a.workers > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(a.workers) as pool:
            out = pool.map(hgs, jobs)
    else:
        out = [hgs(j) for j in jobs]
    refs = {v: np.array([c for c, _ in out[k * a.test_count:(k + 1) * a.test_count]]) for k, v in enumerate(sets)}
    ref_infeasible = sum(not f for _, f in out)
    print(f"HGS references: {len(jobs)} instances at n={n}, {a.hgs_seconds} s each, {a.workers} workers, "
          f"{time.perf_counter() - t0:.1f} s wall, {ref_infeasible} infeasible", flush=True)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    nets, train = {}, {}
    for k, v in enumerate(seen):
        t0 = time.perf_counter()
        nets[v], curve = models.train_teacher(v, n, SimpleNamespace(**pt["teacher"]), a.seed, k, device,
                                              max_seconds=0.6 * a.max_seconds / len(seen))
        sync()
        dt = time.perf_counter() - t0
        train[f"teacher_{v}"] = {"steps": len(curve), "seconds": dt, "steps_per_s": len(curve) / dt,
                                 "first_cost": curve[0], "last10_cost": float(np.mean(curve[-10:]))}
        print(f"teacher {v}: {len(curve)} steps in {dt:.1f} s ({len(curve) / dt:.2f} steps/s, batch "
              f"{pt['teacher']['batch']} x {n} starts); sampled cost {curve[0]:.3f} -> {np.mean(curve[-10:]):.3f}",
              flush=True)
    t0 = time.perf_counter()
    student, curve = models.distill(nets, n, SimpleNamespace(**pt["student"]), a.seed, device,
                                    max_seconds=0.4 * a.max_seconds)
    sync()
    dt = time.perf_counter() - t0
    train["student"] = {"steps": len(curve), "seconds": dt, "steps_per_s": len(curve) / dt,
                        "first_kl": curve[0], "last10_kl": float(np.mean(curve[-10:]))}
    print(f"student: {len(curve)} KD steps in {dt:.1f} s ({len(curve) / dt:.2f} steps/s); "
          f"KL {curve[0]:.3f} -> {np.mean(curve[-10:]):.3f}", flush=True)

    def gap(cost, v):
        return float(100 * np.mean(np.asarray(cost) / refs[v] - 1))

    t0 = time.perf_counter()
    per, infeasible = {}, 0
    with torch.no_grad():
        for v, inst in sets.items():
            res = {}
            for t, net in list(nets.items()) + [("student", student)]:
                cost, routes = solve_chunked(net, inst, a.eval_chunk)
                infeasible += sum(bool(vrp.check_solution(inst, i, r, 1e-5)) for i, r in enumerate(routes))
                res[t if t == "student" else f"teacher_{t}"] = gap(cost, v)
            better = models.r3c(student, inst, routes, rounds, segment, np.random.default_rng([a.seed, 4, n, len(per)]))
            infeasible += sum(bool(vrp.check_solution(inst, i, r, 1e-5)) for i, r in enumerate(better))
            res["student_r3c"] = gap([vrp.route_cost(inst, i, r) for i, r in enumerate(better)], v)
            res["teacher_own"] = res.get(f"teacher_{v}")
            res["best_teacher_gap"] = min(res[f"teacher_{t}"] for t in seen)
            per[v] = res
            print(f"  {v}_{n}: " + ", ".join(f"{key} {val:.2f}" for key, val in res.items() if val is not None),
                  flush=True)
    sync()
    eval_s = time.perf_counter() - t0
    seen_s = float(np.mean([per[v]["student"] for v in seen]))
    seen_t = float(np.mean([per[v]["teacher_own"] for v in seen]))
    plain = float(np.mean([per[v]["student"] for v in sets]))
    r3c = float(np.mean([per[v]["student_r3c"] for v in sets]))
    unseen_diff = float(np.mean([per[v]["student"] - per[v]["best_teacher_gap"] for v in unseen]))
    checks = {"student_matches_teachers_seen": {"figure": seen_s / seen_t, "check": "<= 1.2",
                                                "holds": seen_s / seen_t <= 1.2},
              "r3c_lowers_gap": {"figure": plain - r3c, "check": "> 0", "holds": plain - r3c > 0},
              "solutions_feasible": {"figure": infeasible, "check": "<= 0", "holds": infeasible == 0},
              "student_beats_best_teacher_unseen (should)": {"figure": unseen_diff, "check": "<= 0",
                                                             "holds": unseen_diff <= 0}}
    for name, c in checks.items():
        print(f"{name}: {c['figure']:.4g} ({c['check']}): {'holds' if c['holds'] else 'FAILS'}", flush=True)
    result = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
              "torch": torch.__version__, "tiny": a.tiny, "n": n, "test_count": a.test_count,
              "hgs_seconds": a.hgs_seconds, "r3c_rounds": rounds, "max_seconds": a.max_seconds,
              "teacher": pt["teacher"], "student": pt["student"], "train": train, "eval_seconds": eval_s,
              "hgs_infeasible": ref_infeasible, "per_variant": per, "checks": checks}
    Path(a.out).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
