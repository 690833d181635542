"""labyrinth train: for every verdict seed (``ctx.seeds``, one after another in this process;
stages.common.seeds.run_seeds), behaviour cloning and DAgger on that seed's base training mazes,
and behaviour cloning on each variant's training mazes, all from the exact (BFS) expert. DAgger
starts from that seed's behaviour-cloning policy (a copy: the step both would train alike).

Outputs: data/labyrinth/models (``seed<s>/<name>.pt`` state dicts per seed and learner,
``config.json``, and the MLflow pyfunc folders ``bc_pyfunc`` / ``dagger_pyfunc`` of the first
verdict seed's policies, whose input example is the start observations of that seed's first three
base test mazes) and reports/labyrinth/train.json (``per_seed``: samples, final loss,
CPU seconds per learner; beside their means over the seeds).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import MAZES, MODELS, TRAIN_METRICS


def view_of(name: str, view_radius: int):
    """The partial-view radius a learner sees with (None: the whole maze)."""
    return view_radius if name.endswith("partial") else None


def input_example(mazes: list, rows: int = 3):
    """The pyfunc's input example: the start observation (full view, no key) of each of the first
    ``rows`` mazes of ``mazes`` (a seed's base test mazes), flattened into the columns ``x0``..
    (float64: it admits the float32 of maze.encode too)."""
    import numpy as np
    import pandas as pd

    from .maze import encode

    obs = np.stack([encode(m, m.start, 0).reshape(-1) for m in mazes[:rows]]).astype(np.float64)
    return pd.DataFrame(obs, columns=[f"x{i}" for i in range(obs.shape[1])])


def train_seed(mazes: dict, p, view_radius: int, seed: int, log=None) -> tuple[dict, dict]:
    """Every learner of one seed on that seed's mazes ({variant: {split: [Maze]}}):
    ({name: (net, n)}, {name: figures})."""
    import time

    from .imitate import LEARNERS, Task, train_bc, train_dagger

    nets, metrics = {}, {}
    bc_base = None
    for name in LEARNERS:
        variant = "base" if name in ("bc", "dagger") else name[3:]
        tasks = [Task.of(m) for m in mazes[variant]["train"]]
        n = tasks[0].maze.n
        view = view_of(name, view_radius)
        t0 = time.process_time()
        label = f"seed {seed} {name}"
        if name == "dagger":
            net, info = train_dagger(tasks, view, p.epochs, p.lr, p.batch, seed, p.dagger_iterations,
                                     p.dagger_epochs, p.steps_per_cell * n * n, p.width, p.hidden,
                                     bc=bc_base, label=label)
        else:
            epochs = p.epochs if name == "bc" else p.variant_epochs
            net, info = train_bc(tasks, view, epochs, p.lr, p.batch, seed, p.width, p.hidden, label=label)
            if name == "bc":
                bc_base = (net, info)
        nets[name] = (net, n)
        if log is not None:
            log(f"seed{seed}.{name}.loss", info["loss"])
        metrics[name] = {"samples": info["n_samples"], "final_loss": info["loss"][-1],
                         "cpu_s": time.process_time() - t0}
    if bc_base is not None and "dagger" in metrics:     # DAgger's time includes the BC step it starts from
        metrics["dagger"]["cpu_s"] += metrics["bc"]["cpu_s"]
    return nets, metrics


def main() -> None:
    with stage("labyrinth", "train", PARAMS) as ctx:
        import io
        import json

        import torch

        from stages.common.device import limit_threads
        from stages.common.io import atomic_dir, write_json
        from stages.common.mlmodel import save_pyfunc
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .maze import load_mazes

        limit_threads(1)
        mazes = load_mazes(ctx.path(MAZES))
        missing = [s for s in ctx.seeds if s not in mazes]
        if missing:
            raise ValueError(f"{MAZES} holds no mazes for the verdict seeds {missing}: run labyrinth-prepare")
        p, pp = ctx.params.train, ctx.params.prepare
        done = run_seeds(ctx.seeds, lambda s: train_seed(mazes[s], p, pp.view_radius, s, ctx.run.log_curve),
                         what="learners, seed")
        first = ctx.seeds[0]
        config = {name: {"n": n, "width": p.width, "hidden": p.hidden,
                         "view_radius": view_of(name, pp.view_radius)} for name, (_, n) in done[first][0].items()}
        with atomic_dir(ctx.path(MODELS)) as tmp:
            for s, (nets, _) in done.items():
                (tmp / f"seed{s}").mkdir()
                for name, (net, _) in nets.items():
                    buf = io.BytesIO()
                    torch.save(net.state_dict(), buf)
                    (tmp / f"seed{s}" / f"{name}.pt").write_bytes(buf.getvalue())
            (tmp / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True))
            code = ctx.path("stages/labyrinth/pyfunc.py")
            example = input_example(mazes[first]["base"]["test"])      # the served seed's first test mazes
            for name in ("bc", "dagger"):
                save_pyfunc(tmp / f"{name}_pyfunc", code,
                            {"weights": tmp / f"seed{first}" / f"{name}.pt", "config": tmp / "config.json"},
                            input_example=example)
        for name in ("bc", "dagger"):
            ctx.run.log_model(ctx.path(MODELS) / f"{name}_pyfunc", name,
                              params={"learner": name, "seed": first, **config[name]})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics({s: m for s, (_, m) in done.items()}))


if __name__ == "__main__":
    main()
