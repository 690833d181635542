"""mtl_kd calibration, on calibration seeds only (>= 1000, never a verdict seed): the study's
whole per-seed chain in this process (test sets and HGS references, teachers, distilled student,
RL-only multi-task control, evaluation), each claim's per-seed figure and its control's judged as
the ledger judges the verdict seeds (stages.common.inference.judge), and the CPU time of every part.

    nice -n 10 python -m benchmarks.mtl_kd.calibration [--seeds 1000,...] [--profile default]
        [--set train.student.lr=0.003 ...]
    nice -n 10 python -m benchmarks.mtl_kd.calibration --tune 0.001,0.003 [--student-steps-arm]
    nice -n 10 python -m benchmarks.mtl_kd.calibration --hgs 300,500 [--seeds 1000,1001]
    python -m benchmarks.mtl_kd.calibration --smoke        # tiny sizes in seconds (what CI runs)

``--tune LRS``: the learning-rate search the distilled student and the RL-only control get alike
(README: mtl_kd, Calibration): per seed the teachers are trained once, then the student (KD) and
the RL-only multi-task model are trained at every learning rate of the list with the profile's
budget, and each is scored by its mean gap on the seen variants at the training size (the
in-distribution figure; the generalisation sets the musts read are shown, not used to choose). It
prints every arm's means over the seeds and the rate each arm gets. ``--student-steps-arm`` adds
an RL-only model charged the student's own distillation budget only (its steps and instances, the
teachers' training not counted), at the learning rate 0.001. ``--hgs N,N_LARGE``: the reference's iteration limits of the profile
(``prepare.pyvrp_iterations`` / ``_large``) against N at n and N_LARGE at n_large, on the same
instances of each seed: the mean relative difference of the HGS costs (%) and the CPU of both;
the budget cut to fewer iterations is judged by it. ``--set`` changes a key of the
profile (dotted, under the study's section) for this run only; params.py's budget check holds
for it too. Nothing is written into the checkout.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

# (label, metric, op, threshold, control or None): the claims of stages/mtl_kd/claims.yaml
CHECKS = [
    ("student_generalises_to_n50 (must)", "large.student_minus_teacher", "<=", 0.0, "large.rl_mtl_minus_teacher"),
    ("student_beats_best_teacher_unseen (must)", "unseen.student_minus_best_teacher", "<=", 0.0,
     "unseen.rl_mtl_minus_best_teacher"),
    ("student_matches_teachers_seen", "seen.student_over_teacher", "<=", 1.2, "seen.rl_mtl_over_teacher"),
    ("r3c_beats_augmentation", "r3c.r3c_minus_aug", ">", 0.0, None),
]
CONTEXT = ["seen.teacher_gap", "seen.student_gap", "seen.rl_mtl_gap", "large.teacher_gap", "large.student_gap",
           "large.rl_mtl_gap", "large.student_minus_rl_mtl", "unseen.best_teacher_gap", "unseen.student_gap",
           "unseen.rl_mtl_gap", "unseen.student_minus_rl_mtl", "unseen.student_r3c_gap", "r3c.plain_gap",
           "r3c.r3c_gap", "r3c.aug_gap", "r3c.gap_reduction", "r3c.aug_gap_reduction",
           "r3c.seconds_r3c_extra_per_plain", "r3c.seconds_aug_extra_per_plain", "infeasible_solutions"]


def judged(label, values, op, thr):
    from stages.common.inference import judge

    j = judge(values, op, thr, "interval")
    iv = "" if j.interval is None else f"[{j.interval[0]:.3f}, {j.interval[1]:.3f}]"
    return (f"{label}: per seed [{', '.join(f'{x:.3f}' for x in values)}] mean {j.mean:.3f} 90% {iv} "
            f"{op} {thr} -> {j.verdict}")


def chain(p, seeds):
    """The stages' compute for each seed in this process: {seed: metrics}, {part: CPU s}."""
    from stages.mtl_kd.evaluate import evaluate_seed
    from stages.mtl_kd.prepare import reference_sets
    from stages.mtl_kd.train import train_seed

    out, cpu = {}, {"references": 0.0, "teachers": 0.0, "student": 0.0, "rl_mtl": 0.0, "evaluate": 0.0}
    for s in seeds:
        c0 = time.process_time()
        sets, _ = reference_sets(p.prepare, s)
        c1 = time.process_time()
        nets, fig = train_seed(p.train, p.prepare, s)
        c2 = time.process_time()
        out[s] = evaluate_seed(nets, sets, p.prepare, p.evaluate, s)
        c3 = time.process_time()
        cpu["references"] += c1 - c0
        cpu["teachers"] += sum(v for k, v in fig.items() if k.startswith("teacher_") and k.endswith("_cpu_s"))
        cpu["student"] += fig["student_cpu_s"]
        cpu["rl_mtl"] += fig["rl_mtl_cpu_s"]
        cpu["evaluate"] += c3 - c2
        m = out[s]
        print(f"  seed {s}: {c3 - c0:.1f} CPU s (references {c1 - c0:.1f}, train {c2 - c1:.1f}, evaluate "
              f"{c3 - c2:.1f}); n50 student-teacher {m['large']['student_minus_teacher']:+.2f} RL-only-teacher "
              f"{m['large']['rl_mtl_minus_teacher']:+.2f}; unseen student-best {m['unseen']['student_minus_best_teacher']:+.2f} "
              f"RL-only-best {m['unseen']['rl_mtl_minus_best_teacher']:+.2f}", flush=True)
    return out, cpu


def report(ms, seeds):
    from stages.common.claims import lookup

    for label, metric, op, thr, control in CHECKS:
        print(judged(label, [lookup(ms[s], metric) for s in seeds], op, thr))
        if control:
            print("  control " + judged(control, [lookup(ms[s], control) for s in seeds], op, thr))
    print("context (per seed):")
    for key in CONTEXT:
        print(f"  {key}: [{', '.join(f'{lookup(ms[s], key):.3f}' for s in seeds)}]")


def gap_on(net, sets, v, size) -> float:
    """A net's mean gap (%) on the test set (variant v, size)."""
    import torch

    from stages.mtl_kd import models, vrp
    from stages.mtl_kd.evaluate import gap

    with torch.no_grad():
        return gap(models.solve(net, {k: sets[(v, size)][k] for k in vrp.KEYS})[0], sets[(v, size)]["ref_cost"])


def gaps_of(net, sets, pp) -> dict:
    """A multi-task net's mean gaps: seen variants at n, unseen at n, seen at n_large."""
    import numpy as np

    return {"seen": float(np.mean([gap_on(net, sets, v, pp.n) for v in pp.seen])),
            "unseen": float(np.mean([gap_on(net, sets, v, pp.n) for v in pp.unseen])),
            "large": float(np.mean([gap_on(net, sets, v, pp.n_large) for v in pp.seen]))}


def teachers_gaps(teachers, sets, pp) -> dict:
    """The teachers' figures as the claims read them: each on its own variant (seen, n_large), the
    best one zero-shot on each unseen variant."""
    import numpy as np

    return {"seen": float(np.mean([gap_on(teachers[v], sets, v, pp.n) for v in pp.seen])),
            "unseen": float(np.mean([min(gap_on(t, sets, u, pp.n) for t in teachers.values()) for u in pp.unseen])),
            "large": float(np.mean([gap_on(teachers[v], sets, v, pp.n_large) for v in pp.seen]))}


def tune(p, seeds, lrs, small_arm: bool):
    """The same learning-rate search for the KD student and the RL-only control (module doc)."""
    import numpy as np

    from stages.mtl_kd import models
    from stages.mtl_kd.prepare import reference_sets

    pp, pt = p.prepare, p.train
    small = pt.rl_mtl.model_copy(update={"lr": 1e-3, "steps": pt.student.steps,
                                         "batch": len(pp.seen) * pt.student.batch})
    arms = [(a, lr) for lr in lrs for a in ("student", "rl_mtl")] + ([("rl_mtl_student_steps", 1e-3)] if small_arm else [])
    figs = {arm: [] for arm in [("teachers", None)] + arms}
    cpu = {arm: 0.0 for arm in arms}
    for s in seeds:
        sets, _ = reference_sets(pp, s)
        teachers = {v: models.train_teacher(v, pp.n, pt.teacher, s, j, starts=pt.starts)[0]
                    for j, v in enumerate(pp.seen)}
        figs[("teachers", None)].append(teachers_gaps(teachers, sets, pp))
        for arm, lr in arms:
            c0 = time.process_time()
            if arm == "student":
                net = models.distill(teachers, pp.n, pt.student.model_copy(update={"lr": lr}), s, starts=pt.starts)[0]
            elif arm == "rl_mtl":
                net = models.train_control(pp.seen, pp.n, pt.teacher, pt.rl_mtl.model_copy(update={"lr": lr}), s,
                                           starts=pt.starts)[0]
            else:
                net = models.train_control(pp.seen, pp.n, pt.teacher, small, s, starts=pt.starts)[0]
            cpu[(arm, lr)] += time.process_time() - c0
            figs[(arm, lr)].append(gaps_of(net, sets, pp))
        print(f"  seed {s}: " + "; ".join(f"{a}{'' if lr is None else f' lr {lr:g}'} seen {f[-1]['seen']:.2f} "
                                          f"unseen {f[-1]['unseen']:.2f} n{pp.n_large} {f[-1]['large']:.2f}"
                                          for (a, lr), f in figs.items()), flush=True)
    print(f"learning-rate search on seeds {seeds}: mean gaps (%) over the seeds; the rate is chosen by the seen "
          f"gap at n={pp.n} (in-distribution), the unseen and n={pp.n_large} figures are shown, not used; rl_mtl: "
          f"{pt.rl_mtl.steps} steps of {pt.rl_mtl.batch}"
          + (f"; rl_mtl_student_steps: {small.steps} steps of {small.batch}" if small_arm else ""))
    for (arm, lr), f in figs.items():
        mean = {key: float(np.mean([x[key] for x in f])) for key in ("seen", "unseen", "large")}
        seen = ", ".join(f"{x['seen']:.2f}" for x in f)
        print(f"  {arm}{'' if lr is None else f' lr {lr:g}'}: seen {mean['seen']:.2f} (per seed {seen}), unseen "
              f"{mean['unseen']:.2f}, n{pp.n_large} {mean['large']:.2f}"
              + (f"; {cpu[(arm, lr)]:.0f} CPU s" if (arm, lr) in cpu else ""))
    for arm in ("student", "rl_mtl"):
        means = {lr: float(np.mean([x["seen"] for x in figs[(arm, lr)]])) for lr in lrs}
        print(f"  {arm}: best lr by the seen gap {min(means, key=means.get):g}")


def hgs_check(p, seeds, more: tuple[int, int]):
    """The profile's HGS iteration limits against ``more`` ones on the same test instances."""
    import numpy as np

    from stages.mtl_kd import baseline, vrp
    from stages.mtl_kd.prepare import test_sets

    pp = p.prepare
    rows = {}
    for s in seeds:
        for (v, size), inst in test_sets(pp, s).items():
            its = (pp.pyvrp_iterations, more[0]) if size == pp.n else (pp.pyvrp_iterations_large, more[1])
            costs, cpu = [], []
            for it in its:
                c0 = time.process_time()
                costs.append(np.array([vrp.route_cost(inst, i, baseline.solve(inst, i, it, seed=s)[0])
                                       for i in range(len(inst["demand"]))]))
                cpu.append(time.process_time() - c0)
            rel = 100 * (costs[0] / costs[1] - 1)
            rows.setdefault(size, []).append(rel)
            print(f"  seed {s} {v} n={size}: HGS {its[0]} vs {its[1]} iterations: cost {rel.mean():+.3f} % "
                  f"(max {rel.max():+.2f} %), CPU {cpu[0]:.1f} vs {cpu[1]:.1f} s", flush=True)
    for size, rel in rows.items():
        rel = np.concatenate(rel)
        print(f"n={size}: fewer iterations cost {rel.mean():+.3f} % on average over {len(rel)} instances "
              f"(max {rel.max():+.2f} %)")


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--tune", default="", help="comma-separated learning rates: the search of both arms")
    ap.add_argument("--student-steps-arm", action="store_true",
                    help="with --tune: also an RL-only model with the student's own steps and instances only")
    ap.add_argument("--hgs", default="", help="N,N_LARGE: the profile's HGS iterations against these")
    a, seeds = parse_seeds(ap, smoke_tune="0.001,0.003")

    from stages.common.device import limit_threads
    from stages.mtl_kd.params import PARAMS

    limit_threads()
    p = study_params("mtl_kd", PARAMS, a)
    t0, c0 = time.perf_counter(), time.process_time()
    if a.hgs:
        hgs_check(p, seeds, tuple(int(x) for x in a.hgs.split(",")))
        return
    lrs = a.tune or getattr(a, "smoke_tune", "")           # --smoke runs both parts
    if lrs:
        tune(p, seeds, [float(x) for x in lrs.split(",")], a.student_steps_arm or a.smoke)
    if not a.tune:
        ms, cpu = chain(p, seeds)
        print(f"\nprofile {a.profile} {' '.join(a.set)}; calibration seeds {seeds}; "
              f"{time.process_time() - c0:.1f} CPU s, {time.perf_counter() - t0:.1f} s wall; parts (CPU s): "
              + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()))
        report(ms, seeds)


if __name__ == "__main__":
    main()
