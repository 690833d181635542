"""labyrinth train: behaviour cloning and DAgger on the base training mazes, and behaviour cloning
on each variant's training mazes, all from the exact (BFS) expert.

Outputs: data/labyrinth/models (one ``<name>.pt`` state dict per learner, ``config.json``, and the
MLflow pyfunc folders ``bc_pyfunc`` / ``dagger_pyfunc``) and reports/labyrinth/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import MAZES, MODELS, TRAIN_METRICS

def view_of(name: str, view_radius: int):
    """The partial-view radius a learner sees with (None: the whole maze)."""
    return view_radius if name.endswith("partial") else None


def main() -> None:
    with stage("labyrinth", "train", PARAMS) as ctx:
        import io
        import json
        import time

        import torch
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import atomic_dir, write_json
        from stages.common.mlmodel import save_pyfunc

        from .imitate import LEARNERS, Task, train_bc, train_dagger
        from .maze import load_mazes

        limit_threads(1)
        mazes = load_mazes(ctx.path(MAZES))
        p, pp = ctx.params.train, ctx.params.prepare
        metrics, nets = {}, {}
        for name in tqdm(LEARNERS, desc="labyrinth learners"):
            variant = "base" if name in ("bc", "dagger") else name[3:]
            tasks = [Task.of(m) for m in mazes[variant]["train"]]
            n = tasks[0].maze.n
            view = view_of(name, pp.view_radius)
            t0 = time.process_time()
            if name == "dagger":
                net, info = train_dagger(tasks, view, p.epochs, p.lr, p.batch, ctx.seed, p.dagger_iterations,
                                         p.dagger_epochs, p.steps_per_cell * n * n, p.width, p.hidden)
            else:
                epochs = p.epochs if name == "bc" else p.variant_epochs
                net, info = train_bc(tasks, view, epochs, p.lr, p.batch, ctx.seed, p.width, p.hidden)
            nets[name] = (net, n)
            ctx.run.log_curve(f"{name}.loss", info["loss"])
            metrics[name] = {"samples": info["n_samples"], "final_loss": info["loss"][-1],
                             "cpu_s": time.process_time() - t0}
        config = {name: {"n": n, "width": p.width, "hidden": p.hidden,
                         "view_radius": view_of(name, pp.view_radius)} for name, (_, n) in nets.items()}
        with atomic_dir(ctx.path(MODELS)) as tmp:
            for name, (net, _) in nets.items():
                buf = io.BytesIO()
                torch.save(net.state_dict(), buf)
                (tmp / f"{name}.pt").write_bytes(buf.getvalue())
            (tmp / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True))
            code = ctx.path("stages/labyrinth/pyfunc.py")
            for name in ("bc", "dagger"):
                save_pyfunc(tmp / f"{name}_pyfunc", code,
                            {"weights": tmp / f"{name}.pt", "config": tmp / "config.json"})
        for name in ("bc", "dagger"):
            ctx.run.log_model(ctx.path(MODELS) / f"{name}_pyfunc", name, params={"learner": name, **config[name]})
        write_json(ctx.path(TRAIN_METRICS), metrics)


if __name__ == "__main__":
    main()
