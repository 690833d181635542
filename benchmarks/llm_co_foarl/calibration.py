"""llm_co_foarl calibration, on calibration seeds only (>= 1000, never a verdict seed) and on a
calibration data set (instances drawn with ``--data-seed``, >= 1000; the stages use
``prepare.data_seed`` of the profile, below 1000).

For each calibration seed it runs what the train and evaluate stages run for a verdict seed
(stages.llm_co_foarl.core.train_seed and evaluate_seed) with the profile's params, ``--set``
changing any of them, and prints: the SFT learning curve (greedy gap on feasible solutions and
feasible rate on the first ``train.curve_instances`` test instances, every ``train.curve_every``
steps), the random and heuristic rungs on those instances, the figures of the musts and of their
controls per seed with the verdict the ledger's rule would give them over these seeds
(stages.common.inference.judge), the per-problem figures, and CPU seconds per phase.
``--sft-only`` stops after SFT (the learning curve alone: comparing model designs).

    nice -n 19 python -m benchmarks.llm_co_foarl.calibration                         # default profile, seeds 1000-1004
    nice -n 19 python -m benchmarks.llm_co_foarl.calibration --sft-only --seeds 1000,1001 \\
        --set train.entities=false --set train.pointer=false                          # without the entity states

``--cache FILE`` keeps the solved calibration data set (OR-Tools) between runs; ``--out FILE`` writes
every figure as JSON. ``--smoke`` runs it at the smoke profile's tiny sizes in seconds (what CI
runs): two seeds, figures that mean nothing.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

# (claim, its figure, its control's figure): the musts as claims.yaml judges them (> 0)
MUSTS = (("foarl_raises_feasible_rate", "feasible_gain_mean", "control_feasible_gain_mean"),
         ("foarl_lowers_gap_on_feasible", "gap_drop_mean_pct", "control_gap_drop_mean_pct"))
PER_PROBLEM = ("feasible_gain_mean_{p}", "control_feasible_gain_mean_{p}", "gap_drop_mean_{p}_pct",
               "control_gap_drop_mean_{p}_pct", "gap_all_drop_mean_{p}_pct", "sft_feasible_{p}", "foarl_feasible_{p}",
               "control_feasible_{p}", "sft_gap_{p}_pct", "foarl_gap_{p}_pct", "control_gap_{p}_pct")


def calibration_data(prep, data_seed: int, cache: str):
    """The calibration data set: the profile's sizes, instances from ``data_seed`` (>= 1000)."""
    from stages.llm_co_foarl import core

    key = {"prepare": prep.model_dump(exclude={"data_seed"}), "data_seed": data_seed}
    if cache and Path(cache).exists():
        saved = json.loads(Path(cache).read_text())
        if saved.get("key") == key:
            return saved["data"]
    size = {"tsp": prep.size.tsp, "kp": prep.size.kp}
    data = core.solve_dataset(size, prep.n_train, prep.n_test, prep.workers, data_seed)
    if cache:
        Path(cache).write_text(json.dumps({"key": key, "data": data}))
    return data


def main(argv: list[str] | None = None) -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--data-seed", type=int, default=1000, help="draws the calibration instances (>= 1000)")
    ap.add_argument("--sft-only", action="store_true", help="SFT and its learning curve only")
    ap.add_argument("--cache", default="", help="a JSON file keeping the solved calibration data set")
    ap.add_argument("--out", default="", help="write every figure to this JSON file (after each seed)")
    ap.add_argument("--resume", action="store_true", help="keep the seeds --out already holds (same params)")
    a, seeds = parse_seeds(ap, argv)
    if a.data_seed < 1000:
        raise SystemExit("the calibration data set uses data seeds >= 1000 only (the stages' data seed is below)")

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.llm_co_foarl import core
    from stages.llm_co_foarl.ladder import heuristic_gaps
    from stages.llm_co_foarl.params import PARAMS

    limit_threads(1)
    p = study_params("llm_co_foarl", PARAMS, a)
    t0 = time.process_time()
    data = calibration_data(p.prepare, a.data_seed, a.cache)
    print(f"profile {a.profile}, calibration seeds {seeds}, data seed {a.data_seed} "
          f"({time.process_time() - t0:.1f} s CPU in this process for the data); train params: "
          f"{json.dumps(p.train.model_dump())}", flush=True)
    for k, (prob, d) in enumerate(data.items()):
        rungs = heuristic_gaps(prob, d["test"][:p.train.curve_instances], np.random.default_rng([a.data_seed, 21, k]))
        print(f"  {prob}: rungs on the curve's {p.train.curve_instances} instances: "
              + ", ".join(f"{key} {100 * v:.1f}%" for key, v in rungs.items()), flush=True)

    def log(message: str) -> None:
        print(message, flush=True)

    out: dict = {"seeds": seeds, "data_seed": a.data_seed, "params": p.model_dump(), "sft_only": a.sft_only,
                 "per_seed": {}}
    if a.resume and a.out and Path(a.out).exists():
        saved = json.loads(Path(a.out).read_text())
        if all(saved.get(k) == out[k] for k in ("data_seed", "params", "sft_only")):
            out["per_seed"] = {int(s): v for s, v in saved["per_seed"].items() if int(s) in seeds}
            print(f"  resumed: seeds {sorted(out['per_seed'])} from {a.out}", flush=True)
    for seed in seeds:
        if seed in out["per_seed"]:
            continue
        t = time.process_time()
        if a.sft_only:
            sft = p.train.model_copy(update={"rl_steps": 1, "rl_prompts": 1, "rl_group": 2})
            tr = core.train_seed(data, sft, seed, log=log)
            out["per_seed"][seed] = {"sft_curve": tr["metrics"]["sft_curve"], "cpu_s": {"sft": tr["metrics"]["cpu_s"]["sft"]}}
            save(out, a.out)
            continue
        tr = core.train_seed(data, p.train, seed, log=log)
        te = time.process_time()
        ev = core.evaluate_seed(tr["models"], data, p.evaluate.samples, seed, log=lambda m: None)
        out["per_seed"][seed] = {"sft_curve": tr["metrics"]["sft_curve"], "cpu_s": {
            **tr["metrics"]["cpu_s"], "evaluate": round(time.process_time() - te, 2),
            "seed_total": round(time.process_time() - t, 2)}, "claim": ev["claim"], "ladder": ev["ladder"]}
        save(out, a.out)
        c = ev["claim"]
        log(f"  seed {seed}: " + "; ".join(f"{fig} {c[fig]:+.3f} (control {c[ctl]:+.3f})" for _, fig, ctl in MUSTS)
            + f"; {time.process_time() - t:.1f} s CPU")
        for prob in data:
            log(f"    {prob}: " + ", ".join(f"{k.format(p=prob)} {c[k.format(p=prob)]:.3f}" for k in PER_PROBLEM))

    first = out["per_seed"][seeds[0]]["sft_curve"]
    if first:
        print("\nSFT learning curve (greedy; gap on feasible %: mean over the seeds with a feasible solution; "
              "feasible rate: mean):")
    for i, row in enumerate(first):
        pts = [out["per_seed"][s]["sft_curve"][i] for s in seeds]
        cells = []
        for prob in data:
            gaps = [r[f"{prob}_gap_pct"] for r in pts if r[f"{prob}_gap_pct"] == r[f"{prob}_gap_pct"]]
            gap = f"{np.mean(gaps):.1f}" if gaps else "-"
            cells.append(f"{prob} gap {gap} feasible {np.mean([r[f'{prob}_feasible'] for r in pts]):.2f}")
        print(f"  step {row['step']:5d}: " + "; ".join(cells))
    cpu = {k: float(np.mean([out["per_seed"][s]["cpu_s"][k] for s in seeds])) for k in out["per_seed"][seeds[0]]["cpu_s"]}
    print("CPU s per seed (mean): " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()))
    if not a.sft_only:
        print("\nmusts over these calibration seeds (rule interval, > 0), and their controls:")
        out["verdicts"] = {}
        for cid, fig, ctl in MUSTS:
            own = judge([out["per_seed"][s]["claim"][fig] for s in seeds], ">", 0.0)
            con = judge([out["per_seed"][s]["claim"][ctl] for s in seeds], ">", 0.0)
            out["verdicts"][cid] = {"own": own.verdict, "control": con.verdict}
            print(f"  {cid}: mean {own.mean:+.3f}, 90% interval {own.interval} -> {own.verdict}; "
                  f"control mean {con.mean:+.3f}, interval {con.interval} -> {con.verdict}")
    save(out, a.out)


def save(out: dict, path: str) -> None:
    if path:
        Path(path).write_text(json.dumps(out, indent=1, default=float))


if __name__ == "__main__":
    main()
