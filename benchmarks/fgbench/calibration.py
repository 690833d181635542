"""fgbench calibration, on calibration seeds only (>= 1000, never a verdict seed): each seed's split,
models and figures as the stages make them, every claim's per-seed figure and its control's,
judged as the ledger judges the verdict seeds (stages.common.inference.judge), and the compute.

    nice -n 19 python -m benchmarks.fgbench.calibration [--seeds 1000,...] [--profile default]
        [--set train.pair_trees=100 ...] [--pool /tmp/fgbench-pool.pkl]

What it was used for (README: fgbench, Calibration): whether each must's control (the same model
on shuffled FG edits or counts; the structure-blind model on the stated label) fails the must's
check while the must holds, and whether five seeds of the default profile fit the study's budget.
The data pool (molecules, FGs, pairs, questions) does not depend on the seed and is built once
(``--pool FILE`` keeps it between runs: it is rebuilt when the prepare params differ). ``--set``
changes a key of the profile (dotted, under the study's section) for this run only. It writes
nothing into the checkout. ``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke
profile on 150 molecules a source, two seeds.
"""
from __future__ import annotations

import pickle
import time
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


# (label, metric, op, threshold, rule, control or None): the claims of stages/fgbench/claims.yaml
# and the candidates looked at while choosing them
CHECKS = [
    ("all_nine_types (must)", "counts.types_present", ">=", 9, "every_seed", None),
    ("every_type_in_every_split (must)", "counts.min_type_split_count", ">=", 1, "every_seed", None),
    ("mol_level_fg_counts_help (must)", "mol_level.gain", ">", 0.0, "interval", "mol_level.gain_shuffled"),
    ("single_increase_above_chance (must)", "single_increase.best_ci_low", ">", 0.5, "interval",
     "single_increase.label_only_ci_low"),
    ("  candidate control: majority", "single_increase.majority_ci_low", ">", 0.5, "interval", None),
    ("fg_aware_beats_agnostic_single_value (must)", "single_value.gain", ">", 0.0, "interval",
     "single_value.gain_shuffled"),
    ("single-FG increase, aware - agnostic accuracy", "single_increase.aware_minus_agnostic", ">", 0.0, "interval",
     "single_increase.shuffled_minus_agnostic"),
]
CONTEXT = ["single_increase.best_model", "single_increase.best_accuracy", "single_increase.fg_agnostic_accuracy",
           "single_increase.fg_aware_accuracy", "single_increase.fg_shuffled_accuracy", "single_increase.text_accuracy",
           "single_increase.label_only_accuracy", "single_increase.majority_accuracy", "single_increase.n",
           "single_value.n", "single_value.mae_fg_agnostic", "single_value.mae_fg_aware", "single_value.mae_fg_shuffled",
           "single_value.mae_label_only", "single_value.mae_constant", "single_value.mae_text", "single_value.ci_low",
           "mol_level.solubility.mae_fp", "mol_level.solubility.mae_fp_fg", "mol_level.solubility.mae_fp_fg_shuffled",
           "mol_level.freesolv.gain", "mol_level.freesolv.gain_shuffled", "counts.questions.test"]


def _fmt(x) -> str:
    return "-" if x is None else (f"{x:.4g}" if isinstance(x, (int, float)) else str(x))


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--pool", default="", help="pickle the seed-free data pool here and reuse it")
    a, seeds = parse_seeds(ap)

    from stages.common.claims import lookup
    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.fgbench import prepare, train
    from stages.fgbench.evaluate import evaluate_seed
    from stages.fgbench.params import PARAMS

    limit_threads()
    p = study_params("fgbench", PARAMS, a)
    if a.smoke:      # a smaller pool than the smoke profile's: the script's path in seconds
        p = p.model_copy(update={"prepare": p.prepare.model_copy(update={"max_molecules": 150})})
    if p.prepare.source != "local":
        raise SystemExit("calibration builds the local data (source: local)")
    c0, t0 = time.process_time(), time.perf_counter()
    key = p.prepare.model_dump_json()
    pool = None
    if a.pool and Path(a.pool).exists():
        saved = pickle.loads(Path(a.pool).read_bytes())
        pool = saved["pool"] if saved["key"] == key else None
    if pool is None:
        pool = prepare.build_pool(p.prepare, log=print)
        pool.pop("afg")
        if a.pool:
            Path(a.pool).write_bytes(pickle.dumps({"key": key, "pool": pool}))
    pool_cpu = time.process_time() - c0
    caches = train.Caches(p.train)
    ms, cpu = {}, {}
    for seed in seeds:
        c = time.process_time()
        rows, mol_rows, stats = prepare.seed_split(pool, p.prepare, seed)
        res = train.train_seed(rows["train"], rows["test"], mol_rows, p.train, seed, caches, progress=False)
        c_train = time.process_time() - c
        ms[seed] = evaluate_seed(res["pairs"], res["molecules"], prepare.seed_metrics(rows, stats), p.evaluate, seed)
        cpu[seed] = (c_train, time.process_time() - c - c_train)
        print(f"  seed {seed}: split + train {cpu[seed][0]:.1f} CPU s, evaluate {cpu[seed][1]:.1f} CPU s", flush=True)
    print(f"\nprofile {a.profile} {' '.join(a.set)}; calibration seeds {seeds}; {time.process_time() - c0:.1f} CPU s "
          f"in this process (pool {pool_cpu:.1f}, without its compare_mols workers), "
          f"{time.perf_counter() - t0:.1f} s wall")
    for label, metric, op, thr, rule, control in CHECKS:
        for what, k in (("", metric), ("    control ", control)):
            if k is None:
                continue
            v = [lookup(ms[s], k) for s in seeds]
            j = judge(v, op, thr, rule)
            iv = "" if j.interval is None else f" 90% [{j.interval[0]:.4g}, {j.interval[1]:.4g}]"
            mean = "-" if j.mean is None else f"{j.mean:.4g}"
            print(f"{what}{label if not what else k}: per seed [{', '.join(_fmt(x) for x in v)}] "
                  f"mean {mean}{iv} {op} {thr} ({rule}) -> {j.verdict}")
    print("context (per seed):")
    for k in CONTEXT:
        vals = [lookup(ms[s], k) for s in seeds]
        print(f"  {k}: [{', '.join(_fmt(x) for x in vals)}]")


if __name__ == "__main__":
    main()
