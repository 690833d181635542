"""labyrinth evaluate, for every verdict seed (``ctx.seeds``) on that seed's mazes and learners:
success rates of the learners on the training, evaluation and test mazes (greedy rollouts of
``steps_per_cell * n^2`` steps at most), the share of the expert's states where each learner picks
an optimal action, the BFS expert run through the gymnasium environment; and the plots: success by
split and method (PNG, the mean over the seeds with each seed's dot; CSV, the means), the four
variants drawn by the environment's ``rgb_array`` rendering and behaviour cloning rolled out on a
training and a test maze (GIF), both of the first verdict seed.

A learner's success on its own training mazes is the "test mazes = training mazes" arm: the same
policy, judged on mazes whose structures it was trained on; the claims use it as the control of
the test-maze checks (claims.yaml).

Outputs: reports/labyrinth/metrics.json (what claims.yaml checks: ``per_seed`` beside the means
over the seeds; stages.common.seeds.per_seed_metrics), success.png / success.csv, variants.png,
rollouts.gif.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import GIF, MAZES, MAZES_PNG, METRICS, MODELS, PLOT, PLOT_DATA


def action_accuracy(net, tasks, view) -> float:
    """Share of the states along the expert's trajectories where the learner's greedy action is
    one of the optimal actions (the fine-grained measure the known optimal actions allow)."""
    import numpy as np

    from .imitate import act, expert_demos

    hits, total = 0, 0
    x, _ = expert_demos(tasks, view)
    a = act(net, x)
    i = 0
    for t in tasks:                                          # walk the same trajectories again
        from .maze import transition

        cell, k = t.maze.start, 0
        while True:
            opt = t.optimal(cell, k)
            if not opt:
                break
            hits += int(a[i] in opt)
            total += 1
            i += 1
            cell, k, outcome = transition(t.maze, cell, k, opt[0])
            if outcome is not None:
                break
    return hits / max(total, 1) if total == len(x) else float(np.nan)


def expert_through_env(mazes, max_steps: int) -> float:
    """Success of the BFS expert acting through the gymnasium environment (1.0 if env and solver agree)."""
    import gymnasium as gym

    from . import env as _env  # noqa: F401  (registers the id)
    from .imitate import Task

    env = gym.make(_env.ENV_ID, mazes=mazes, max_steps=max_steps, disable_env_checker=True)
    wins = 0
    for m in mazes:
        t = Task.of(m)
        _, info = env.reset(seed=0, options={"maze": m})
        for _ in range(max_steps):
            _, r, term, trunc, info = env.step(t.optimal(info["cell"], info["has_key"])[0])
            if term or trunc:
                wins += int(term and r > 0)
                break
    return wins / len(mazes)


def frames(net, maze, view, max_steps: int, limit: int):
    """rgb_array frames of the greedy policy on ``maze``, through the environment."""
    import gymnasium as gym

    from . import env as _env  # noqa: F401
    from .imitate import act

    e = gym.make(_env.ENV_ID, mazes=[maze], view_radius=view, max_steps=max_steps, render_mode="rgb_array",
                 disable_env_checker=True)
    obs, _ = e.reset(seed=0)
    out = [e.render()]
    for _ in range(min(max_steps, limit - 1)):
        obs, _, term, trunc, _ = e.step(int(act(net, obs[None])[0]))
        out.append(e.render())
        if term or trunc:
            break
    return out


def evaluate_seed(mazes: dict, nets: dict, pt, pp) -> dict:
    """One seed's figures: {learner: {split_success, split_action_accuracy}}, the train - test gaps,
    DAgger minus BC on test, the base splits' shared structures, the expert through the environment."""
    from .imitate import LEARNERS, Task, rollout

    metrics: dict = {}
    for name in LEARNERS:
        variant = "base" if name in ("bc", "dagger") else name[3:]
        view = pp.view_radius if variant == "partial" else None
        metrics[name] = {}
        for split, ms in mazes[variant].items():
            tasks = [Task.of(m) for m in ms]
            max_steps = pt.steps_per_cell * ms[0].n ** 2
            ok, _, _ = rollout(nets[name], tasks, view, max_steps)
            metrics[name][f"{split}_success"] = float(ok.mean())
            metrics[name][f"{split}_action_accuracy"] = action_accuracy(nets[name], tasks, view)
    base = mazes["base"]
    metrics["gap"] = {m: metrics[m]["train_success"] - metrics[m]["test_success"] for m in ("bc", "dagger")}
    metrics["dagger_minus_bc_test"] = metrics["dagger"]["test_success"] - metrics["bc"]["test_success"]
    metrics["split_overlap"] = sum(len({m.structure_hash() for m in base[a]} & {m.structure_hash() for m in base[b]})
                                   for a, b in (("train", "eval"), ("train", "test"), ("eval", "test")))
    metrics["expert_test_success"] = expert_through_env(base["test"], pt.steps_per_cell * pp.n ** 2)
    return metrics


def main() -> None:
    with stage("labyrinth", "evaluate", PARAMS) as ctx:
        import io

        import numpy as np
        from PIL import Image

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .imitate import LEARNERS, load_policy
        from .maze import load_mazes, render_rgb

        limit_threads(1)
        mazes = load_mazes(ctx.path(MAZES))
        pt, pp = ctx.params.train, ctx.params.prepare
        cfg = ctx.path(MODELS) / "config.json"
        missing = [s for s in ctx.seeds if s not in mazes or not (ctx.path(MODELS) / f"seed{s}").is_dir()]
        if missing:
            raise ValueError(f"no mazes or models for the verdict seeds {missing}: run labyrinth-prepare and -train")
        nets = {s: {name: load_policy(ctx.path(MODELS) / f"seed{s}" / f"{name}.pt", cfg, name)[0]
                    for name in LEARNERS} for s in ctx.seeds}
        per = run_seeds(ctx.seeds, lambda s: evaluate_seed(mazes[s], nets[s], pt, pp), what="evaluation, seed")
        metrics = per_seed_metrics(per)
        write_json(ctx.path(METRICS), metrics)
        rows = []
        for name in LEARNERS:
            variant = "base" if name in ("bc", "dagger") else name[3:]
            for split in mazes[ctx.seeds[0]][variant]:
                vals = [per[s][name][f"{split}_success"] for s in ctx.seeds]
                rows.append({"method": name, "variant": variant, "split": split, "success": float(np.mean(vals)),
                             "success_min": float(min(vals)), "success_max": float(max(vals)), "seeds": len(vals)})
        write_csv(ctx.path(PLOT_DATA), rows)

        first = ctx.seeds[0]
        base = mazes[first]["base"]

        def bars(ax, x, key_of, width, label):
            vals = np.array([[per[s][k1][k2] for s in ctx.seeds] for k1, k2 in key_of])
            ax.bar(x, vals.mean(1), width, label=label)
            for xi, v in zip(x, vals):
                ax.plot(np.full(len(v), xi), v, "k.", ms=3)

        fig, axes = new_figure(1, 2, figsize=(10, 3.6), gridspec_kw={"width_ratios": [3, 4]})
        splits = ["train", "eval", "test"]
        for j, name in enumerate(("bc", "dagger")):
            bars(axes[0], np.arange(3) + (j - 0.5) * 0.38, [(name, f"{s}_success") for s in splits], 0.36,
                 {"bc": "behaviour cloning", "dagger": "DAgger"}[name])
        axes[0].set(xticks=range(3), xticklabels=[f"{s}\n({len(base[s])} mazes)" for s in splits], ylim=(0, 1.25),
                    ylabel="success rate (mean; dots: seeds)",
                    title=f"{pp.n}x{pp.n} mazes, distinct structures per split, {len(ctx.seeds)} seeds")
        axes[0].legend(fontsize=8, loc="upper right", ncol=2)
        var = ["partial", "key_door", "ice"]
        for j, split in enumerate(("train", "test")):
            bars(axes[1], np.arange(3) + (j - 0.5) * 0.38, [(f"bc_{v}", f"{split}_success") for v in var], 0.36,
                 f"BC, {split} mazes")
        axes[1].set(xticks=range(3), xticklabels=["partial view", "key and door", "ice floor"], ylim=(0, 1.25),
                    title=f"variants, {pp.variant_n}x{pp.variant_n}")
        axes[1].legend(fontsize=8, loc="upper right", ncol=2)
        save_png(fig, ctx.path(PLOT))

        fig, axes = new_figure(1, 4, figsize=(12, 3.2))
        for ax, variant in zip(axes, ("base", "partial", "key_door", "ice")):
            m = mazes[first][variant]["test"][0]
            ax.imshow(render_rgb(m, m.start, 0, pp.view_radius if variant == "partial" else None))
            ax.set(title=f"{variant.replace('_', ' ')} (seed {first})", xticks=[], yticks=[])
        save_png(fig, ctx.path(MAZES_PNG))

        limit = ctx.params.evaluate.gif_frames
        max_steps = pt.steps_per_cell * pp.n ** 2
        a = frames(nets[first]["bc"], base["train"][0], None, max_steps, limit)
        b = frames(nets[first]["bc"], base["test"][0], None, max_steps, limit)
        pad = lambda fs, k: fs + [fs[-1]] * (k - len(fs))   # noqa: E731
        k = max(len(a), len(b))
        gap = np.full((a[0].shape[0], 8, 3), 255, dtype=np.uint8)
        pics = [Image.fromarray(np.concatenate([x, gap, y], axis=1)) for x, y in zip(pad(a, k), pad(b, k))]
        buf = io.BytesIO()
        pics[0].save(buf, format="GIF", save_all=True, append_images=pics[1:], duration=150, loop=0)
        write_bytes(ctx.path(GIF), buf.getvalue())
        for s in ctx.seeds:
            m = per[s]
            print(f"  seed {s}: BC success train {m['bc']['train_success']:.2f} / test {m['bc']['test_success']:.2f}; "
                  f"DAgger {m['dagger']['train_success']:.2f} / {m['dagger']['test_success']:.2f}", flush=True)


if __name__ == "__main__":
    main()
