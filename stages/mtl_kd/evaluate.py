"""mtl_kd evaluate: gaps to PyVRP (HGS) of the teachers, the student and the student with R3C, on
the seen variants, the unseen ones and at n_large, and the plot.

A gap is 100 * (cost / reference - 1), averaged over a test set; the reference is PyVRP's HGS
solution costed the same way (vrp.route_cost). Teachers: each on its own variant; on an unseen
variant every teacher zero-shot, and the best of them. Every neural solution goes through the
feasibility checker. Outputs: reports/mtl_kd/metrics.json (what claims.yaml checks),
reports/mtl_kd/gaps.png and its table reports/mtl_kd/gaps.csv.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import METRICS, MODELS, PLOT, PLOT_DATA, TESTSETS


def gap(cost, ref) -> float:
    import numpy as np

    return float(100 * np.mean(np.asarray(cost) / np.asarray(ref) - 1))


def main() -> None:
    with stage("mtl_kd", "evaluate", PARAMS) as ctx:
        import time

        import numpy as np
        import torch
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from . import models, vrp

        limit_threads()
        pp, pe = ctx.params.prepare, ctx.params.evaluate
        nets, _ = models.load_weights(ctx.path(MODELS))
        student = nets["student"]
        teachers = {v: nets[f"teacher_{v}"] for v in pp.seen}
        rows, infeasible, per = [], 0, {}
        cpu = {"plain": 0.0, "r3c": 0.0}
        sets = [(v, s) for s in (pp.n, pp.n_large) for v in pp.seen + pp.unseen]
        for v, size in tqdm(sets, desc="evaluate", mininterval=2):
            data = np.load(ctx.path(TESTSETS) / f"{v}_{size}.npz")
            ref = data["ref_cost"]
            inst = {k: data[k] for k in ("xy", "demand", "window", "capacity", "open", "tw")}
            name = f"{v}_{size}"
            res = {}
            with torch.no_grad():
                for t, net in teachers.items():
                    cost, routes = models.solve(net, inst)
                    infeasible += sum(bool(vrp.check_solution(inst, i, r, 1e-5)) for i, r in enumerate(routes))
                    res[f"teacher_{t}"] = gap(cost, ref)
                t0 = time.process_time()
                cost, routes = models.solve(student, inst)
                dt_plain = time.process_time() - t0
                infeasible += sum(bool(vrp.check_solution(inst, i, r, 1e-5)) for i, r in enumerate(routes))
                res["student"] = gap(cost, ref)
                t0 = time.process_time()
                if size == pp.n:           # R3C at the training size only (the check's; CPU budget)
                    better = models.r3c(student, inst, routes, pe.r3c_rounds, max(2, round(pe.r3c_segment * size)),
                                        np.random.default_rng([ctx.seed, 4, size, len(rows)]))
                dt_r3c = time.process_time() - t0
            if size == pp.n:
                infeasible += sum(bool(vrp.check_solution(inst, i, r, 1e-5)) for i, r in enumerate(better))
                res["student_r3c"] = gap([vrp.route_cost(inst, i, r) for i, r in enumerate(better)], ref)
                cpu["plain"] += dt_plain
                cpu["r3c"] += dt_r3c
            own = res.get(f"teacher_{v}")
            best_t = min(teachers, key=lambda t: res[f"teacher_{t}"])
            res.update({"teacher_own": own, "best_teacher": best_t, "best_teacher_gap": res[f"teacher_{best_t}"],
                        "student_plain_cpu_s": dt_plain, "student_r3c_extra_cpu_s": dt_r3c})
            per[name] = res
            teacher_bar = own if own is not None else res["best_teacher_gap"]
            rows += [{"test_set": name, "method": "teacher (own; best zero-shot if unseen)", "gap_pct": teacher_bar},
                     {"test_set": name, "method": "student (multi-task, KD)", "gap_pct": res["student"]}]
            if "student_r3c" in res:
                rows.append({"test_set": name, "method": "student + R3C", "gap_pct": res["student_r3c"]})

        def mean(key, variants, size):
            return float(np.mean([per[f"{v}_{size}"][key] for v in variants]))

        seen_t, seen_s = mean("teacher_own", pp.seen, pp.n), mean("student", pp.seen, pp.n)
        large_t, large_s = mean("teacher_own", pp.seen, pp.n_large), mean("student", pp.seen, pp.n_large)
        at_n = pp.seen + pp.unseen
        plain, withr3c = mean("student", at_n, pp.n), mean("student_r3c", at_n, pp.n)
        unseen_s, unseen_t = mean("student", pp.unseen, pp.n), mean("best_teacher_gap", pp.unseen, pp.n)
        metrics = {
            "seen": {"teacher_gap": seen_t, "student_gap": seen_s, "student_over_teacher": seen_s / seen_t},
            "r3c": {"plain_gap": plain, "r3c_gap": withr3c, "gap_reduction": plain - withr3c,
                    "plain_cpu_s": cpu["plain"], "r3c_extra_cpu_s": cpu["r3c"],
                    "seconds_r3c_extra_per_plain": cpu["r3c"] / max(cpu["plain"], 1e-9), "rounds": pe.r3c_rounds},
            "unseen": {"student_gap": unseen_s, "best_teacher_gap": unseen_t,
                       "student_r3c_gap": mean("student_r3c", pp.unseen, pp.n),
                       "student_minus_best_teacher": unseen_s - unseen_t},
            "large": {"n": pp.n_large, "teacher_gap": large_t, "student_gap": large_s,
                      "student_minus_teacher": large_s - large_t,
                      "unseen_student_gap": mean("student", pp.unseen, pp.n_large),
                      "unseen_best_teacher_gap": mean("best_teacher_gap", pp.unseen, pp.n_large)},
            "infeasible_solutions": int(infeasible),
            "per_test_set": per,
        }
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(8, 3.8))
        names = [f"{v}_{s}" for v, s in sets]
        methods = list(dict.fromkeys(r["method"] for r in rows))
        w = 0.8 / len(methods)
        for j, meth in enumerate(methods):
            ys = [next((r["gap_pct"] for r in rows if r["test_set"] == nm and r["method"] == meth), np.nan)
                  for nm in names]
            ax.bar(np.arange(len(names)) + (j - (len(methods) - 1) / 2) * w, ys, w, label=meth)
        ax.set_xticks(np.arange(len(names)), [nm + ("*" if nm.split("_")[0] in pp.unseen else "") for nm in names],
                      rotation=30)
        ax.set(ylabel="gap to PyVRP HGS (%)", title="mtl_kd: gaps by test set (* unseen variant)")
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT))
        print(f"  seen n={pp.n}: teacher {seen_t:.2f}% student {seen_s:.2f}% (ratio {seen_s / seen_t:.2f}); "
              f"R3C {plain:.2f}% -> {withr3c:.2f}% at {metrics['r3c']['seconds_r3c_extra_per_plain']:.1f}x extra CPU; "
              f"unseen student {unseen_s:.2f}% vs best teacher {unseen_t:.2f}%; n={pp.n_large}: teacher "
              f"{large_t:.2f}% student {large_s:.2f}%; infeasible {infeasible}", flush=True)


if __name__ == "__main__":
    main()
