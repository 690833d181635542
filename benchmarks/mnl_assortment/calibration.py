"""mnl_assortment calibration, on calibration seeds only (>= 1000, never a verdict seed): the
train stage's runs for five seeds, each claim's per-seed figure and its control's, judged as the
ledger judges the verdict seeds (stages.common.inference.judge, rule interval: the 90 % t-interval
of the per-seed mean), the figures behind them, and the compute it took.

    nice -n 10 python -m benchmarks.mnl_assortment.calibration [--seeds 1000,...] [--profile default]
        [--set 'prepare.online_task="canonical"' ...] [--no-offline]

What it was used for (README: mnl_assortment, Calibration): whether the online checks the study
had as musts (on its task, fresh items every round) see the paper's idea (they did not: the
plug-in MLE with no confidence width passes the slope check, and Oh & Iyengar's width with its
1/(2 kappa) dropped passes the ratio check), whether the region check and its control do (yes),
whether a harder task fixes the regret checks (the canonical N-item MNL problem,
``--set prepare.online_task='"canonical"' --set prepare.runs=8 --no-offline``: no), and whether
five seeds keep the one-seed sizes within the budget (yes). It builds every problem itself (the
prepare stage's functions) and writes nothing into the checkout. ``--set`` changes a key of the
profile (dotted, under the study's section, a JSON value) for this run only. ``--smoke`` runs it
at tiny sizes in seconds (what CI runs): the smoke profile, seeds 1000, 1001.
"""
from __future__ import annotations

import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


# (label, metric, op, threshold, control or None): the claims of stages/mnl_assortment/claims.yaml
CHECKS = [
    ("new_region_kappa_free (must)", "online.region.new_max", "<=", 1.0, "online.region.gram_max"),
    ("new_regret_slope_every_radius", "online.new_slope_max", "<=", 0.6, "online.greedy_slope_max"),
    ("baseline_regret_ratio_every_radius", "online.ratio_min", ">=", 10.0, "online.ratio_gram_min"),
    ("baseline_slope_linear", "online.old_slope_min", ">=", 0.9, None),
    ("offline_pessimism_vs_plugin", "offline.smallest_n.new_minus_plugin", "<=", 0.0, None),
    ("offline_new_vs_old_pessimism", "offline.smallest_n.new_minus_old", "<=", 0.0, None),
]
# figures shown per seed beside the checks ({B}: every radius key)
CONTEXT = ["online.{B}.new.regret_T", "online.{B}.old.regret_T", "online.{B}.gram.regret_T",
           "online.{B}.greedy.regret_T", "online.{B}.new.slope", "online.{B}.gram.slope", "online.{B}.greedy.slope",
           "online.region.by_radius.{B}.new.max", "online.region.by_radius.{B}.gram.max",
           "online.region.by_radius.{B}.gram.covered_share", "online.region.by_radius.{B}.old.max",
           "online.old_slope_max"]


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--no-offline", action="store_true", help="online runs only")
    a, seeds = parse_seeds(ap)

    from stages.common.claims import lookup
    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.mnl_assortment.env import offline_env, online_env
    from stages.mnl_assortment.evaluate import radius_key, seed_metrics
    from stages.mnl_assortment.mnl import enumerate_assortments
    from stages.mnl_assortment.params import PARAMS
    from stages.mnl_assortment.train import results_arrays, simulate_seeds

    limit_threads()
    p = study_params("mnl_assortment", PARAMS, a)
    pp, tp, ep = p.prepare, p.train, p.evaluate
    A = enumerate_assortments(pp.n_items, pp.capacity)
    c0, w0 = time.process_time(), time.perf_counter()
    on_envs = {s: online_env(pp, s, A) for s in seeds}
    off_envs = {} if a.no_offline else {s: offline_env(pp, s, A) for s in seeds}
    c_env = time.process_time() - c0
    sim = simulate_seeds(pp, tp, seeds, on_envs, off_envs, A, progress=False, offline=not a.no_offline)
    c_sim = time.process_time() - c0 - c_env
    res = results_arrays(sim, seeds, pp)
    ms = {s: seed_metrics(res, s, ep) for s in seeds}
    cpu = time.process_time() - c0
    print(f"\nprofile {a.profile} {' '.join(a.set)}; calibration seeds {seeds}; task {pp.online_task}, "
          f"{pp.runs} runs per seed, radius and arm, T = {pp.horizon}; {cpu:.1f} CPU s (problems {c_env:.1f}, "
          f"runs {c_sim:.1f}: online {sim['online']['online_seconds']:.1f} s wall"
          + ("" if a.no_offline else f", offline {sim['offline']['offline_seconds']:.1f} s wall")
          + f"), {time.perf_counter() - w0:.1f} s wall")
    for label, metric, op, thr, control in CHECKS:
        if a.no_offline and metric.startswith("offline"):
            continue
        for what, key in (("", metric), ("  control ", control)):
            if key is None:
                continue
            v = [lookup(ms[s], key) for s in seeds]
            j = judge(v, op, thr, "interval")
            iv = "" if j.interval is None else f"[{j.interval[0]:.4g}, {j.interval[1]:.4g}]"
            print(f"{what}{label if not what else key}: per seed [{', '.join(f'{x:.4g}' for x in v)}] "
                  f"mean {j.mean:.4g} 90% {iv} {op} {thr} -> {j.verdict}")
    print("context (per seed):")
    for pat in CONTEXT:
        for B in pp.radii:
            key = pat.format(B=radius_key(B))
            vals = [lookup(ms[s], key) for s in seeds]
            print(f"  {key}: [{', '.join('-' if x is None else f'{x:.4g}' for x in vals)}]")
            if "{B}" not in pat:
                break


if __name__ == "__main__":
    main()
