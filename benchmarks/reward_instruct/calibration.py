"""reward_instruct calibration, on calibration seeds only (>= 1000, never a verdict seed): the
stages' own functions (prepare.pretrain, train.train_seed, evaluate.seed_figures) at the profile's
sizes, every figure the claims read, per seed and judged over the seeds as the ledger judges
them (stages.common.inference.judge: the one-sided 95% t-interval of the per-seed mean), the
headline's candidate controls beside the must, and the CPU seconds of each part.

    nice -n 19 python benchmarks/reward_instruct/calibration.py [--seeds 1000,...] [--set train.gentle.lam=1.0]

``--set`` changes one setting of the profile (dotted key under the profile, a JSON value), so a
setting is chosen here, before the verdict seeds run it. ``--smoke`` runs it at tiny sizes in
seconds (what CI runs): the smoke profile, two seeds; its figures mean nothing.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

# (label, metric under `claim`, op, threshold): the checks of stages/reward_instruct/claims.yaml and
# the candidate controls; a figure here is read exactly as the ledger reads it
CHECKS = [
    ("must  R0 - distill logp, min over matched points", "r0_minus_distill_logp_min", ">", 0.0),
    ("ctl   distill_regularised - distill, same", "distill_regularised_minus_distill_logp_min", ">", 0.0),
    ("      unregularised_gentle - distill, same", "unregularised_gentle_minus_distill_logp_min", ">", 0.0),
    ("must  R0 FD / teacher, max over curve", "r0_fd_over_teacher_max", "<=", 3.0),
    ("      unregularised_gentle FD / teacher, max", "unregularised_gentle_fd_over_teacher_max", "<=", 3.0),
    ("      R0 accuracy gain over teacher-50", "r0_accuracy_gain_final", ">=", 0.05),
    ("ctl   distill accuracy gain over teacher-50", "distill_accuracy_gain_final", ">=", 0.05),
    ("ctl   distill_regularised accuracy gain", "distill_regularised_accuracy_gain_final", ">=", 0.05),
    ("      unregularised_gentle accuracy gain", "unregularised_gentle_accuracy_gain_final", ">=", 0.05),
    ("      distill_regularised FD / teacher, max", "distill_regularised_fd_over_teacher_max", "<=", 3.0),
    ("must  unregularised (aggressive) final FD / teacher", "control_fd_over_teacher_final", ">=", 3.0),
    ("shd   R0 aggressive FD / teacher, max", "r0_aggressive_fd_over_teacher_max", "<=", 4.0),
    ("must  R0 FD / distill FD, max over matched", "r0_over_distill_fd_max", "<=", 1.0),
    ("ctl   distill_regularised FD / distill FD, same", "distill_regularised_over_distill_fd_max", "<=", 1.0),
    ("      unregularised_gentle FD / distill FD, same", "unregularised_gentle_over_distill_fd_max", "<=", 1.0),
    ("shd   R0 diversity / teacher's", "r0_diversity_over_teacher_final", ">=", 0.6),
]


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--extra", default="unregularised_gentle",
                    help="runs beside the stages' (stages/reward_instruct/data.py EXTRA_RUNS), comma-separated; '' for none")
    a, seeds = parse_seeds(ap)

    import torch

    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.reward_instruct.data import RUNS, load_digits_scaled
    from stages.reward_instruct.evaluate import seed_figures
    from stages.reward_instruct.params import PARAMS
    from stages.reward_instruct.prepare import pretrain
    from stages.reward_instruct.train import train_seed

    limit_threads(1)
    p = study_params("reward_instruct", PARAMS, a)
    print(f"profile {a.profile} {a.set or ''}: teacher {p.prepare.teacher_steps} steps; gentle {p.train.gentle}; "
          f"aggressive {p.train.aggressive}; calibration seeds {seeds}", flush=True)
    xr = torch.from_numpy(load_digits_scaled()[0])
    runs = RUNS + tuple(r for r in a.extra.split(",") if r)
    figs, cpu = {}, {}
    for seed in seeds:
        t0 = time.process_time()
        pre = pretrain(p.prepare, seed)
        tr = train_seed(p.train, pre["teacher"], pre["abar"], pre["reward"], seed, runs=runs)
        with torch.no_grad():
            real_feats = pre["judge"][:-1](xr).double().numpy()
        t1 = time.process_time()
        m, _ = seed_figures(pre["judge"], real_feats, tr["samples"])
        cpu[seed] = {**pre["cpu_s"], **tr["cpu_s"], "evaluate": time.process_time() - t1,
                     "total": time.process_time() - t0}
        figs[seed] = m
        print(f"  seed {seed}: teacher-50 acc {m['teacher_ref']['accuracy']:.3f} logp {m['teacher_ref']['logp']:.3f} "
              f"FD {m['teacher_ref']['fd']:.1f}; minus distill at matched points: " + "; ".join(
                  f"{arm} [{', '.join(f'{d:+.3f}' for d in m['matched'][f'{arm}_minus_distill_logp'])}]"
                  for arm in ("r0", "distill_regularised", "unregularised_gentle") if f"{arm}_minus_distill_logp" in m["matched"])
              + "; CPU s " + ", ".join(f"{k} {v:.1f}" for k, v in cpu[seed].items()), flush=True)
    print(f"\nper seed {seeds}, mean, one-sided 95% t-interval, verdict (the ledger's rule `interval`):")
    for label, key, op, thr in CHECKS:
        if key not in figs[seeds[0]]["claim"]:
            continue
        v = [figs[s]["claim"][key] for s in seeds]
        j = judge(v, op, thr, "interval")
        iv = "" if j.interval is None else f"[{j.interval[0]:+.3f}, {j.interval[1]:+.3f}]"
        print(f"  {label:52s} {op} {thr:<5g} [{', '.join(f'{x:+.3f}' for x in v)}] mean {j.mean:+.3f} {iv} -> {j.verdict}")
    tot = [cpu[s]["total"] - sum(cpu[s].get(r, 0.0) for r in runs if r not in RUNS) for s in seeds]
    print(f"\nCPU s per seed, the stages' runs only (pre-training + generators + judging): {', '.join(f'{t:.1f}' for t in tot)}; "
          f"{len(seeds)} seeds {sum(tot):.0f} s; per part, mean over seeds: "
          + ", ".join(f"{k} {sum(cpu[s][k] for s in seeds) / len(seeds):.1f}" for k in cpu[seeds[0]] if k != "total"))


if __name__ == "__main__":
    main()
