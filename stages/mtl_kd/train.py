"""mtl_kd train, for every verdict seed: one POMO-style teacher per seen variant by REINFORCE
(POMO's shared baseline), then the multi-task heavy-decoder student distilled from them (KL to
each teacher's action distribution on that teacher's sampled trajectories; every step holds a
batch of every seen variant); and the musts' control, a multi-task model trained by RL alone (the
teachers' light-decoder net, REINFORCE on batches of every seen variant, no distillation) with
the distilled student's whole budget (as many steps and instances as the teachers and the student
together; stages/mtl_kd/params.py checks it). Training instances are generated on the fly from
the seed (train streams, disjoint from the test streams of prepare); every training rollout has
``train.starts`` POMO starts. All train on ``common.device`` (``auto``: CUDA when present).

Outputs: data/mtl_kd/models/seed_<s>/ (state dicts + config.json), data/mtl_kd/student_model (the
first verdict seed's student as an MLflow pyfunc model, logged and registered as
``mtl_kd-student``; its input example: the first training instance of each seen variant) and
reports/mtl_kd/train.json (per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import MODELS, STUDENT_MODEL, TRAIN_METRICS


def train_seed(pt, pp, seed: int, device="cpu", progress=None, log_curve=None):
    """Every net of one verdict seed: ({teacher_<v>, student, rl_mtl: net}, figures). ``pt``: the
    train params, ``pp``: the prepare params (n, seen)."""
    import time

    from . import models

    n, seen, starts = pp.n, pp.seen, pt.starts
    nets, figures = {}, {}

    def tail(curve):
        return sum(curve[-10:]) / len(curve[-10:])

    for k, v in enumerate(seen):
        t0 = time.process_time()
        nets[f"teacher_{v}"], curve = models.train_teacher(v, n, pt.teacher, seed, k, device, progress, starts=starts)
        figures[f"teacher_{v}_cpu_s"] = time.process_time() - t0
        figures[f"teacher_{v}_final_sampled_cost"] = tail(curve)
        if log_curve:
            log_curve(f"seed_{seed}.teacher.{v}.sampled_cost", curve)
    t0 = time.process_time()
    nets["student"], curve = models.distill({v: nets[f"teacher_{v}"] for v in seen}, n, pt.student, seed,
                                            device, progress, starts=starts)
    figures["student_cpu_s"] = time.process_time() - t0
    figures["student_final_kl"] = tail(curve)
    if log_curve:
        log_curve(f"seed_{seed}.student.kl", curve)
    t0 = time.process_time()
    nets["rl_mtl"], curve = models.train_control(seen, n, pt.teacher, pt.rl_mtl, seed, device, progress,
                                                 starts=starts)
    figures["rl_mtl_cpu_s"] = time.process_time() - t0
    figures["rl_mtl_final_sampled_cost"] = tail(curve)
    if log_curve:
        log_curve(f"seed_{seed}.rl_mtl.sampled_cost", curve)
    figures["student_params"] = sum(x.numel() for x in nets["student"].parameters())
    figures["teacher_params"] = sum(x.numel() for x in nets[f"teacher_{seen[0]}"].parameters())
    return nets, figures


def config_of(pt, pp) -> dict:
    """What models.load_weights needs to rebuild one seed's nets (the control has the teachers' shape)."""
    names = [f"teacher_{v}" for v in pp.seen] + ["student", "rl_mtl"]
    return {"teacher": pt.teacher.model_dump(), "student": pt.student.model_dump(),
            "rl_mtl": pt.rl_mtl.model_dump(), "starts": pt.starts, "n": pp.n, "seen": pp.seen,
            "nets": {name: ("student" if name == "student" else "teacher") for name in names}}


def main() -> None:
    with stage("mtl_kd", "train", PARAMS) as ctx:
        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads, select_device
        from stages.common.io import atomic_dir, write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from . import models, vrp

        limit_threads()
        device = select_device(ctx.common.device)
        pt, pp = ctx.params.train, ctx.params.prepare
        per_seed = pt.teacher.steps * len(pp.seen) + pt.student.steps + pt.rl_mtl.steps
        bar = tqdm(total=per_seed * len(ctx.seeds), desc="train (RL teachers, KD student, RL-only control)",
                   mininterval=2)
        with atomic_dir(ctx.path(MODELS)) as tmp:
            def one(seed):
                nets, figures = train_seed(pt, pp, seed, device, bar, ctx.run.log_curve)
                folder = tmp / f"seed_{seed}"
                folder.mkdir()
                models.save_weights(folder, nets, config_of(pt, pp))
                return figures

            results = run_seeds(ctx.seeds, one, what="seed's nets")
        bar.close()
        # the input example: the first training instance of each seen variant (its teacher's
        # first batch, drawn again from the same stream: models.train_teacher's [seed, 2, k])
        example = vrp.concat([vrp.take(vrp.generate(v, pp.n, pt.teacher.batch,
                                                    np.random.default_rng([ctx.seeds[0], 2, k])), [0])
                              for k, v in enumerate(pp.seen)])
        models.save_mlflow(ctx.path(STUDENT_MODEL), ctx.path(MODELS) / f"seed_{ctx.seeds[0]}", example)
        ctx.run.log_model(ctx.path(STUDENT_MODEL), "student", params={"n": pp.n, "seen": ",".join(pp.seen),
                                                                      "seed": ctx.seeds[0], **pt.student.model_dump()})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(results))


if __name__ == "__main__":
    main()
