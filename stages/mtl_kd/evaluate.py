"""mtl_kd evaluate, for every verdict seed: gaps to PyVRP (HGS) of the teachers, the distilled
student, the RL-only multi-task model (the musts' control) and the student with R3C or with one
augmented pass, on the seen variants at n, the unseen ones at n (zero-shot) and the seen ones at
n_large (trained at n); and the plot of the means over the seeds.

A gap is 100 * (cost / reference - 1), averaged over a test set; the reference is PyVRP's HGS
solution costed the same way (vrp.route_cost). Teachers: each on its own variant; on an unseen
variant every teacher zero-shot, and the best of them on that seed's set. Every model infers by
greedy multi-start from every customer (n starts). Every neural solution goes through the
feasibility checker. Outputs: reports/mtl_kd/metrics.json (``per_seed`` and the means over the
seeds: what claims.yaml checks), reports/mtl_kd/gaps.png and its table reports/mtl_kd/gaps.csv
(means over the seeds).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import METRICS, MODELS, PLOT, PLOT_DATA, TESTSETS

METHODS = {"teacher": "teacher (own; best zero-shot if unseen)", "student": "student (multi-task, KD)",
           "rl_mtl": "RL-only multi-task (control)", "student_r3c": "student + R3C"}


def gap(cost, ref) -> float:
    import numpy as np

    return float(100 * np.mean(np.asarray(cost) / np.asarray(ref) - 1))


def evaluate_seed(nets: dict, sets: dict, pp, pe, seed: int) -> dict:
    """One verdict seed's figures from its nets ({teacher_<v>, student, rl_mtl}) and its test
    sets ({(variant, n): arrays with ``ref_cost``})."""
    import time

    import numpy as np
    import torch

    from . import models, vrp

    student, rl_mtl = nets["student"], nets["rl_mtl"]
    teachers = {v: nets[f"teacher_{v}"] for v in pp.seen}
    infeasible, per = 0, {}
    cpu = {"plain": 0.0, "r3c": 0.0, "aug": 0.0}

    def bad(inst, routes):
        return sum(bool(vrp.check_solution(inst, i, r, 1e-5)) for i, r in enumerate(routes))

    order = [(v, pp.n) for v in pp.seen + pp.unseen] + [(v, pp.n_large) for v in pp.seen]
    for k, (v, size) in enumerate(order):
        data = sets[(v, size)]
        ref = data["ref_cost"]
        inst = {key: data[key] for key in vrp.KEYS}
        res = {}
        with torch.no_grad():
            for t, net in teachers.items():
                cost, routes = models.solve(net, inst)
                infeasible += bad(inst, routes)
                res[f"teacher_{t}"] = gap(cost, ref)
            cost, routes = models.solve(rl_mtl, inst)
            infeasible += bad(inst, routes)
            res["rl_mtl"] = gap(cost, ref)
            t0 = time.process_time()
            cost, routes = models.solve(student, inst)
            res["student_plain_cpu_s"] = time.process_time() - t0
            infeasible += bad(inst, routes)
            res["student"] = gap(cost, ref)
            if size == pp.n:           # R3C and the augmented pass at the training size only (CPU budget)
                t0 = time.process_time()
                better = models.r3c(student, inst, routes, pe.r3c_rounds, max(2, round(pe.r3c_segment * size)),
                                    np.random.default_rng([seed, 4, size, k]))
                res["student_r3c_extra_cpu_s"] = time.process_time() - t0
                infeasible += bad(inst, better)
                res["student_r3c"] = gap([vrp.route_cost(inst, i, r) for i, r in enumerate(better)], ref)
                t0 = time.process_time()
                _, aug_routes = models.solve(student, models.swap_xy(inst))
                res["student_aug_extra_cpu_s"] = time.process_time() - t0
                infeasible += bad(inst, aug_routes)
                aug_cost = [vrp.route_cost(inst, i, r) for i, r in enumerate(aug_routes)]
                res["student_aug"] = gap(np.minimum(cost, aug_cost), ref)
                cpu["plain"] += res["student_plain_cpu_s"]
                cpu["r3c"] += res["student_r3c_extra_cpu_s"]
                cpu["aug"] += res["student_aug_extra_cpu_s"]
        best_t = min(teachers, key=lambda t: res[f"teacher_{t}"])
        res.update({"best_teacher": best_t, "best_teacher_gap": res[f"teacher_{best_t}"]})
        if v in teachers:
            res["teacher_own"] = res[f"teacher_{v}"]
        per[f"{v}_{size}"] = res

    def mean(key, variants, size):
        return float(np.mean([per[f"{v}_{size}"][key] for v in variants]))

    seen_t, seen_s, seen_c = (mean(k, pp.seen, pp.n) for k in ("teacher_own", "student", "rl_mtl"))
    large_t, large_s, large_c = (mean(k, pp.seen, pp.n_large) for k in ("teacher_own", "student", "rl_mtl"))
    unseen_t, unseen_s, unseen_c = (mean(k, pp.unseen, pp.n) for k in ("best_teacher_gap", "student", "rl_mtl"))
    at_n = pp.seen + pp.unseen
    plain, withr3c, withaug = (mean(k, at_n, pp.n) for k in ("student", "student_r3c", "student_aug"))
    return {
        "seen": {"teacher_gap": seen_t, "student_gap": seen_s, "rl_mtl_gap": seen_c,
                 "student_over_teacher": seen_s / seen_t, "rl_mtl_over_teacher": seen_c / seen_t},
        "unseen": {"student_gap": unseen_s, "best_teacher_gap": unseen_t, "rl_mtl_gap": unseen_c,
                   "student_r3c_gap": mean("student_r3c", pp.unseen, pp.n),
                   "student_minus_best_teacher": unseen_s - unseen_t, "rl_mtl_minus_best_teacher": unseen_c - unseen_t,
                   "student_minus_rl_mtl": unseen_s - unseen_c},
        "large": {"n": pp.n_large, "teacher_gap": large_t, "student_gap": large_s, "rl_mtl_gap": large_c,
                  "student_minus_teacher": large_s - large_t, "rl_mtl_minus_teacher": large_c - large_t,
                  "student_minus_rl_mtl": large_s - large_c},
        "r3c": {"plain_gap": plain, "r3c_gap": withr3c, "gap_reduction": plain - withr3c,
                "aug_gap": withaug, "aug_gap_reduction": plain - withaug, "r3c_minus_aug": withaug - withr3c,
                "plain_cpu_s": cpu["plain"], "r3c_extra_cpu_s": cpu["r3c"], "aug_extra_cpu_s": cpu["aug"],
                "seconds_r3c_extra_per_plain": cpu["r3c"] / max(cpu["plain"], 1e-9),
                "seconds_aug_extra_per_plain": cpu["aug"] / max(cpu["plain"], 1e-9), "rounds": pe.r3c_rounds},
        "infeasible_solutions": int(infeasible),
        "per_test_set": per,
    }


def load_sets(folder) -> dict:
    """One seed's test sets as prepare wrote them: {(variant, n): arrays}."""
    import numpy as np

    out = {}
    for f in sorted(folder.glob("*.npz")):
        v, size = f.stem.rsplit("_", 1)
        with np.load(f) as d:
            out[(v, int(size))] = {k: d[k] for k in d.files}
    return out


def plot_rows(results: dict, pp) -> list[dict]:
    """The plot's table: per test set and method, the mean gap over the seeds."""
    import numpy as np

    rows = []
    names = [f"{v}_{pp.n}" for v in pp.seen + pp.unseen] + [f"{v}_{pp.n_large}" for v in pp.seen]
    for name in names:
        for key, label in METHODS.items():
            col = ("teacher_own" if name.split("_")[0] in pp.seen else "best_teacher_gap") if key == "teacher" else key
            vals = [m["per_test_set"][name].get(col) for m in results.values()]
            if all(x is not None for x in vals):
                rows.append({"test_set": name, "method": label, "gap_pct": float(np.mean(vals)), "seeds": len(vals)})
    return rows


def main() -> None:
    with stage("mtl_kd", "evaluate", PARAMS) as ctx:
        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics, run_seeds

        from . import models

        limit_threads()
        pp, pe = ctx.params.prepare, ctx.params.evaluate

        def one(seed):
            folder, sets_dir = ctx.path(MODELS) / f"seed_{seed}", ctx.path(TESTSETS) / f"seed_{seed}"
            for need, made_by in ((sets_dir, "mtl_kd-prepare"), (folder, "mtl_kd-train")):
                if not need.is_dir():
                    raise SystemExit(f"{need} is missing: the verdict seed {seed} has no outputs of {made_by}; "
                                     f"run `dvc repro stages/mtl_kd/dvc.yaml`")
            nets, _ = models.load_weights(folder)
            m = evaluate_seed(nets, load_sets(sets_dir), pp, pe, seed)
            print(f"  seed {seed}: seen n={pp.n} student/teacher {m['seen']['student_over_teacher']:.2f} "
                  f"(RL-only {m['seen']['rl_mtl_over_teacher']:.2f}); n={pp.n_large} student-teacher "
                  f"{m['large']['student_minus_teacher']:+.2f} (RL-only {m['large']['rl_mtl_minus_teacher']:+.2f}); "
                  f"unseen student-best teacher {m['unseen']['student_minus_best_teacher']:+.2f} "
                  f"(RL-only {m['unseen']['rl_mtl_minus_best_teacher']:+.2f}); R3C -{m['r3c']['gap_reduction']:.2f}, "
                  f"augmented pass -{m['r3c']['aug_gap_reduction']:.2f}; infeasible {m['infeasible_solutions']}",
                  flush=True)
            return m

        results = run_seeds(ctx.seeds, one, what="seed's evaluation")
        rows = plot_rows(results, pp)
        write_json(ctx.path(METRICS), per_seed_metrics(results))
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(8, 3.8))
        names = list(dict.fromkeys(r["test_set"] for r in rows))
        methods = list(METHODS.values())
        w = 0.8 / len(methods)
        for j, meth in enumerate(methods):
            ys = [next((r["gap_pct"] for r in rows if r["test_set"] == nm and r["method"] == meth), np.nan)
                  for nm in names]
            ax.bar(np.arange(len(names)) + (j - (len(methods) - 1) / 2) * w, ys, w, label=meth)
        ax.set_xticks(np.arange(len(names)), [nm + ("*" if nm.split("_")[0] in pp.unseen else "") for nm in names],
                      rotation=30)
        ax.set(ylabel="gap to PyVRP HGS (%)",
               title=f"mtl_kd: mean gap over the verdict seeds {list(ctx.seeds)} (* unseen variant)")
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT))


if __name__ == "__main__":
    main()
