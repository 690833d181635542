"""labyrinth calibration, on calibration seeds only (>= 1000, never a verdict seed).

Default mode: the study's own stage functions (prepare.build, train.train_seed,
evaluate.evaluate_seed) for each calibration seed at a profile's settings (``--set`` changes one,
e.g. ``--set train.dagger_iterations=3``): per seed, every learner's success on its training
mazes (the "test mazes = training mazes" arm, the controls' figure) and on its test mazes (the
musts' figures), and the CPU seconds of each seed; then the t-interval verdicts over the seeds of
each must and its control, with the thresholds of claims.yaml (stages.common.claims). This is
what the claims were registered from (README: labyrinth, Calibration).

    nice -n 10 python benchmarks/labyrinth/calibration.py [--seeds 1000,...] [--profile default] [--set k=v]

``--spec`` mode (the what-if runs the study was first sized with): each argument one run,
comma-separated key=value (n=8,n_train=60,n_test=100,epochs=80,same=1; ``same=1`` tests on the
training mazes, ``dagger=k`` runs k DAgger rounds), each run once per calibration seed.

``--smoke`` runs it at the smoke profile's sizes with two seeds, in seconds (what CI runs).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def run(n, n_train, n_test, epochs, variant="base", view=None, same=False, dagger=0, seed=1000, loop=0.1,
        batch=64, width=32, lr=3e-3):
    """One what-if run: BC (or DAgger) trained on ``n_train`` mazes, success on train and test mazes."""
    import numpy as np
    import torch

    from stages.common.seeds import rng as seed_rng
    from stages.labyrinth.imitate import Task, rollout, train_bc, train_dagger
    from stages.labyrinth.maze import make_splits, optimal_length

    torch.set_num_threads(1)
    rng = seed_rng(seed, 0)
    t0 = time.process_time()
    if same:
        sp = make_splits(n, variant, {"train": n_train}, rng, loop)
        sp["test"] = sp["train"]
    else:
        sp = make_splits(n, variant, {"train": n_train, "test": n_test}, rng, loop)
    tr = [Task.of(m) for m in sp["train"]]
    te = [Task.of(m) for m in sp["test"]]
    t1 = time.process_time()
    ms = 4 * n * n
    if dagger:
        net, info = train_dagger(tr, view, epochs, lr, batch, seed, dagger, max(epochs // 3, 1), ms, width)
    else:
        net, info = train_bc(tr, view, epochs, lr, batch, seed, width)
    t2 = time.process_time()
    s_tr = rollout(net, tr, view, ms)[0].mean()
    s_te = rollout(net, te, view, ms)[0].mean()
    t3 = time.process_time()
    print(f"seed={seed} n={n} var={variant} view={view} same={same} dagger={dagger} ntr={n_train} ep={epochs} "
          f"samples={info['n_samples']} opt_len={np.mean([optimal_length(m) for m in sp['test']]):.1f} "
          f"train={s_tr:.2f} test={s_te:.2f} | cpu gen={t1-t0:.1f}s fit={t2-t1:.1f}s eval={t3-t2:.1f}s "
          f"b={batch} w={width} lr={lr} loss={info['loss'][-1]:.3f}", flush=True)


SMOKE_SPECS = ["n=5,n_train=4,n_test=4,epochs=2,batch=16",
               "n=5,variant=key_door,view=1,same=1,dagger=1,n_train=4,n_test=4,epochs=3,batch=16"]


def study(seeds: list[int], p) -> None:
    """The stages' compute for each calibration seed, and the musts' and controls' verdicts."""
    import torch

    from stages.common.claims import load_claims
    from stages.common.inference import judge
    from stages.labyrinth.evaluate import evaluate_seed
    from stages.labyrinth.prepare import build
    from stages.labyrinth.train import train_seed

    torch.set_num_threads(1)
    per = {}
    for s in seeds:
        t0 = time.process_time()
        mazes = build(p.prepare, s)
        t1 = time.process_time()
        nets, tm = train_seed(mazes, p.train, p.prepare.view_radius, s)
        t2 = time.process_time()
        m = evaluate_seed(mazes, {k: v[0] for k, v in nets.items()}, p.train, p.prepare)
        t3 = time.process_time()
        per[s] = m
        cpu = ", ".join(f"{k} {v['cpu_s']:.1f}" for k, v in tm.items())
        learners = "  ".join(f"{k} {m[k]['train_success']:.2f}/{m[k]['test_success']:.2f}" for k in nets)
        print(f"seed {s}: train/test success  {learners}  | split_overlap {m['split_overlap']} "
              f"expert {m['expert_test_success']:.2f} | cpu prepare {t1 - t0:.1f}s train {t2 - t1:.1f}s "
              f"({cpu}) evaluate {t3 - t2:.1f}s "
              f"total {t3 - t0:.1f}s", flush=True)
    cf = load_claims(Path(__file__).resolve().parents[2] / "stages/labyrinth/claims.yaml")

    def fmt(iv):
        return "-" if iv is None else f"[{iv[0]:.3f}, {iv[1]:.3f}]"

    def get(tree, dotted):
        for k in dotted.split("."):
            tree = tree[k]
        return tree

    print("claims over these calibration seeds (rule interval, the thresholds of claims.yaml):")
    for c in cf.claims:
        if getattr(c, "retired", None):
            continue
        try:
            vals = [float(get(per[s], c.metric)) for s in seeds]
        except KeyError:
            continue
        j = judge(vals, c.op, c.threshold, getattr(c, "rule", "interval"))
        line = (f"  {c.id} ({c.level}, {c.op} {c.threshold}): {[round(v, 3) for v in vals]} mean {j.mean:.3f} "
                f"interval {fmt(j.interval)} -> {j.verdict}")
        ctrl = getattr(c, "control", None)
        if ctrl:
            cv = [float(get(per[s], ctrl)) for s in seeds]
            jc = judge(cv, c.op, c.threshold, c.rule)
            line += f"; control {ctrl}: {[round(v, 3) for v in cv]} -> {jc.verdict}"
        print(line, flush=True)


CONV = {"n": int, "n_train": int, "n_test": int, "epochs": int, "dagger": int,
        "view": lambda v: None if v == "None" else int(v), "same": lambda v: v == "1",
        "variant": str, "loop": float, "batch": int, "width": int, "lr": float}


def specs(items: list[str], seeds: list[int]) -> None:
    for spec in items:
        kw = dict(kv.split("=") for kv in spec.split(","))
        for seed in seeds:
            run(seed=seed, **{k: CONV[k](v) for k, v in kw.items()})


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--spec", nargs="*", help="what-if runs, each comma-separated key=value")
    a, seeds = parse_seeds(ap)
    if a.spec is not None:
        specs(a.spec or SMOKE_SPECS, seeds)
        return
    from stages.labyrinth.params import PARAMS

    study(seeds, study_params("labyrinth", PARAMS, a))
    if a.smoke:
        specs(SMOKE_SPECS, seeds[:1])


if __name__ == "__main__":
    main()
