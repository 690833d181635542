"""mtl_kd calibration: steps per second of the teachers' REINFORCE loop and of the student's
distillation loop on 2 cores (CPU time), then the must checks at the given sizes; and (``fail``)
the settings where they fail, from the default run's models.
Run: nice -n 19 python -m benchmarks.mtl_kd.calibration [teacher_steps kd_steps batch n n_test]
     nice -n 19 python -m benchmarks.mtl_kd.calibration fail [kd_steps tiny_segment]
     python -m benchmarks.mtl_kd.calibration --smoke   # --smoke runs it at tiny sizes in seconds (what CI runs)"""
from __future__ import annotations

import sys
import time

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.mtl_kd import baseline, models, vrp


class P:
    def __init__(self, dim, layers, heads):
        self.dim, self.layers, self.heads = dim, layers, heads


def cpu():
    return time.process_time()


def main(teacher_steps=150, kd_steps=150, batch=32, n=20, n_test=32, dim=64):
    torch.manual_seed(0)
    limit_threads(1)
    rng = np.random.default_rng(0)
    gen = torch.Generator().manual_seed(0)
    seen = ["cvrp", "ovrp", "vrptw"]
    teachers = {}
    for v in seen:
        t = models.make("teacher", P(dim, 2, 4))
        opt = torch.optim.Adam(t.parameters(), lr=1e-3)
        c0 = cpu()
        for s in range(teacher_steps):
            c = models.reinforce_step(t, opt, vrp.generate(v, n, batch, rng), gen)
            if s % 50 == 0:
                print(f"  teacher {v} step {s} mean cost {c:.3f}", flush=True)
        dt = cpu() - c0
        print(f"teacher {v}: {teacher_steps / dt:.2f} steps/s (batch {batch} x {n} starts), {dt:.1f} s CPU", flush=True)
        teachers[v] = t
    student = models.make("student", P(dim, 2, 4))
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    c0 = cpu()
    for s in range(kd_steps):
        loss = models.distill_step(student, opt, teachers, {v: vrp.generate(v, n, batch // 2, rng) for v in seen},
                                   gen, 512)
        if s % 50 == 0:
            print(f"  kd step {s} loss {loss:.3f}", flush=True)
    dt = cpu() - c0
    print(f"student kd: {kd_steps / dt:.2f} steps/s, {dt:.1f} s CPU", flush=True)
    for v in seen + ["ovrptw"]:
        inst = vrp.generate(v, n, n_test, np.random.default_rng(99))
        c0 = cpu()
        ref = np.array([vrp.route_cost(inst, i, baseline.solve(inst, i, 300)[0]) for i in range(n_test)])
        t_ref = cpu() - c0
        gaps = {}
        for name, t in teachers.items():
            cost, _ = models.solve(t, inst)
            gaps[name] = float(np.mean(cost / ref - 1))
        c0 = cpu()
        cost, routes = models.solve(student, inst)
        t_plain = cpu() - c0
        gs = float(np.mean(cost / ref - 1))
        c0 = cpu()
        r2 = models.r3c(student, inst, routes, 10, n // 2, np.random.default_rng(0))
        t_r3c = cpu() - c0
        c2 = np.array([vrp.route_cost(inst, i, r2[i]) for i in range(n_test)])
        bad = sum(bool(vrp.check_solution(inst, i, r2[i], 1e-5)) for i in range(n_test))
        print(f"{v}: teachers {({k: round(g * 100, 2) for k, g in gaps.items()})} student {gs * 100:.2f}% "
              f"r3c {float(np.mean(c2 / ref - 1)) * 100:.2f}% (infeasible {bad}) cpu ref {t_ref:.1f}s plain "
              f"{t_plain:.2f}s r3c {t_r3c:.2f}s", flush=True)




def fail_settings(kd_steps: int = 15, tiny_segment: int = 1, root: str = "."):
    """Where the must checks fail, from the default run's teachers and test sets (run after
    `dvc repro stages/mtl_kd/dvc.yaml`): a student distilled for only ``kd_steps`` steps (the
    1.2x check), and R3C whose segments hold ``tiny_segment`` customer (nothing to re-order: the
    gap-reduction check)."""
    from pathlib import Path

    from stages.common.runtime.params import load_study, read_params
    from stages.mtl_kd.params import PARAMS
    from stages.mtl_kd.models import distill

    limit_threads(1)
    root = Path(root)
    common, p = load_study("mtl_kd", PARAMS, read_params(root), profile="default")
    nets, _ = models.load_weights(root / "data/mtl_kd/models")
    seen = p.prepare.seen
    teachers = {v: nets[f"teacher_{v}"] for v in seen}
    c0 = cpu()
    weak, _ = distill(teachers, p.prepare.n, p.train.student.model_copy(update={"steps": kd_steps}), 0)
    print(f"weak student: {kd_steps} KD steps, {cpu() - c0:.1f} s CPU")
    rows = {}
    for v in seen + p.prepare.unseen:
        d = np.load(root / f"data/mtl_kd/testsets/{v}_{p.prepare.n}.npz")
        inst = {k: d[k] for k in ("xy", "demand", "window", "capacity", "open", "tw")}
        ref = d["ref_cost"]
        g = lambda c: float(100 * np.mean(np.asarray(c) / ref - 1))   # noqa: E731
        own = g(models.solve(teachers[v], inst)[0]) if v in teachers else None
        weak_gap = g(models.solve(weak, inst)[0])
        cost, routes = models.solve(nets["student"], inst)
        tiny = models.r3c(nets["student"], inst, routes, p.evaluate.r3c_rounds, tiny_segment, np.random.default_rng(0))
        rows[v] = (own, weak_gap, g(cost), g([vrp.route_cost(inst, i, r) for i, r in enumerate(tiny)]))
        print(f"{v}: teacher {own}, weak student {weak_gap:.2f}%, student {rows[v][2]:.2f}%, "
              f"R3C with {tiny_segment}-customer segments {rows[v][3]:.2f}%")
    t = np.mean([rows[v][0] for v in seen])
    w = np.mean([rows[v][1] for v in seen])
    print(f"weak student / teachers on seen: {w / t:.2f} (check <= 1.2)")
    at_n = seen + p.prepare.unseen
    print(f"R3C tiny segments: gap reduction {np.mean([rows[v][2] - rows[v][3] for v in at_n]):.3f} (check > 0)")


def smoke() -> None:
    """Both parts at toy sizes: ``main``, then ``fail_settings`` on a stand-in root in a temporary
    folder (the repository's params files, tiny nets trained and saved by the study's own
    functions, two-instance test sets with HGS references), so no `dvc repro` is needed."""
    import shutil
    import tempfile
    from pathlib import Path
    from types import SimpleNamespace

    from stages.common.runtime.params import load_study, read_params
    from stages.mtl_kd.params import PARAMS

    print("smoke: main at toy sizes (figures meaningless)", flush=True)
    main(teacher_steps=2, kd_steps=2, batch=4, n=6, n_test=2, dim=16)
    repo = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(prefix="mtl_kd_smoke_") as tmp:
        root = Path(tmp)
        (root / "stages/mtl_kd").mkdir(parents=True)
        shutil.copy(repo / "params.yaml", root / "params.yaml")
        shutil.copy(repo / "stages/mtl_kd/params.json", root / "stages/mtl_kd/params.json")
        _, p = load_study("mtl_kd", PARAMS, read_params(root), profile="default")
        n, seen = p.prepare.n, p.prepare.seen
        print(f"smoke: no trained models; fail settings on tiny stand-in nets and 2 test instances per variant "
              f"at n={n}", flush=True)
        tiny = SimpleNamespace(dim=16, layers=1, heads=2, steps=2, batch=4, lr=1e-3, states_per_variant=32)
        nets = {f"teacher_{v}": models.train_teacher(v, n, tiny, 0, k)[0] for k, v in enumerate(seen)}
        nets["student"] = models.distill({v: nets[f"teacher_{v}"] for v in seen}, n, tiny, 0)[0]
        folder = root / "data/mtl_kd/models"
        (root / "data/mtl_kd/testsets").mkdir(parents=True)
        folder.mkdir()
        cfg = {k: v for k, v in vars(tiny).items() if k in ("dim", "layers", "heads")}
        models.save_weights(folder, nets, {"teacher": cfg, "student": cfg, "n": n, "seen": seen,
                                           "nets": {k: "student" if k == "student" else "teacher" for k in nets}})
        for k, v in enumerate(seen + p.prepare.unseen):
            inst = vrp.generate(v, n, 2, np.random.default_rng([0, 1, k, n]))
            ref = [vrp.route_cost(inst, i, baseline.solve(inst, i, 20)[0]) for i in range(2)]
            np.savez(root / f"data/mtl_kd/testsets/{v}_{n}.npz", ref_cost=np.array(ref), **inst)
        fail_settings(kd_steps=1, tiny_segment=1, root=str(root))


if __name__ == "__main__":
    if "--smoke" in sys.argv[1:]:
        smoke()
    elif sys.argv[1:2] == ["fail"]:
        fail_settings(*[int(x) for x in sys.argv[2:]])
    else:
        main(*[int(x) for x in sys.argv[1:]])
