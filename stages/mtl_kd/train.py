"""mtl_kd train: one POMO-style teacher per seen variant by REINFORCE (POMO's shared baseline),
then the multi-task heavy-decoder student distilled from them (KL to each teacher's action
distribution on that teacher's sampled trajectories; every step holds a batch of every seen
variant). Training instances are generated on the fly from the seed (train stream, disjoint
from the test streams of prepare). Both train on ``common.device`` (``auto``: CUDA when present);
on CPU the results are the same as before the device path (tests/mtl_kd).

Outputs: data/mtl_kd/models (state dicts + config.json), data/mtl_kd/student_model (the student
as an MLflow pyfunc model, logged and registered as ``mtl_kd-student``) and reports/mtl_kd/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import MODELS, STUDENT_MODEL, TRAIN_METRICS


def main() -> None:
    with stage("mtl_kd", "train", PARAMS) as ctx:
        import time

        from tqdm import tqdm

        from stages.common.device import limit_threads, select_device
        from stages.common.io import atomic_dir, write_json

        from . import models

        limit_threads()
        device = select_device(ctx.common.device)
        p, n = ctx.params.train, ctx.params.prepare.n
        seen = ctx.params.prepare.seen
        nets, timing, finals = {}, {}, {}
        bar = tqdm(total=p.teacher.steps * len(seen) + p.student.steps, desc="train (RL teachers, then KD)",
                   mininterval=2)
        for k, v in enumerate(seen):
            t0 = time.process_time()
            nets[f"teacher_{v}"], curve = models.train_teacher(v, n, p.teacher, ctx.seed, k, device, bar)
            timing[f"teacher_{v}_cpu_s"] = time.process_time() - t0
            ctx.run.log_curve(f"teacher.{v}.sampled_cost", curve)
            finals[f"teacher_{v}_final_sampled_cost"] = sum(curve[-10:]) / len(curve[-10:])
        t0 = time.process_time()
        nets["student"], curve = models.distill({v: nets[f"teacher_{v}"] for v in seen}, n, p.student, ctx.seed,
                                                device, bar)
        timing["student_cpu_s"] = time.process_time() - t0
        bar.close()
        ctx.run.log_curve("student.kl", curve)
        config = {"teacher": p.teacher.model_dump(), "student": p.student.model_dump(), "n": n, "seen": seen,
                  "nets": {name: ("student" if name == "student" else "teacher") for name in nets}}
        with atomic_dir(ctx.path(MODELS)) as tmp:
            models.save_weights(tmp, nets, config)
        models.save_mlflow(ctx.path(STUDENT_MODEL), ctx.path(MODELS))
        ctx.run.log_model(ctx.path(STUDENT_MODEL), "student", params={"n": n, "seen": ",".join(seen),
                                                                      **p.student.model_dump()})
        write_json(ctx.path(TRAIN_METRICS), {**timing, **finals, "student_final_kl": sum(curve[-10:]) / len(curve[-10:]),
                                             "student_params": sum(x.numel() for x in nets["student"].parameters()),
                                             "teacher_params": sum(x.numel() for x in nets[f"teacher_{seen[0]}"].parameters())})


if __name__ == "__main__":
    main()
