"""t2mir evaluate: for every verdict seed, each variant (dense, uniform, t2mir) on the seed's
held-out tasks (goal cells no training context came from).

Per seed and variant: the action accuracy at uniform query cells with a context from the task's own
in-context dataset, the same with a context from another held-out task (the shuffled-context
control: no usable in-context information, so the accuracy falls to what the query cell alone
gives), the same on the training tasks, and the return of greedy in-context rollouts (one
forward per step for all episodes), again with own and shuffled contexts. Every variant sees the
same contexts, queries and start cells (one generator seeded alike per variant), so differences
between variants are paired. Also: the random policy's and the optimal policy's return from the
same starts, one rollout replayed through the gymnasium environment (its return must equal the
batched one) and rendered to a GIF and a PNG strip.

Outputs: reports/t2mir/metrics.json (what claims.yaml checks: the mean over seeds and ``per_seed``),
heldout.png / heldout.csv (accuracy and return per variant and seed, with the shuffled-context
figures), loss.png (training curves, every seed), rollout.gif and rollout.png (the first verdict
seed's T2MIR in context on its held-out tasks, drawn by the environment's rgb_array render).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CURVES, GIF, METRICS, MODELS, PLOT, PLOT_DATA, ROOM_PNG, TASKS


def env_rollout(model, size, goal, context, horizon, start):
    """One greedy in-context episode through the gymnasium environment (``t2mir/DarkRoom-v0``) with
    a fixed ``context`` (one task's k transitions, arrays without the batch axis): (return, rgb frames)."""
    import gymnasium as gym
    import numpy as np
    import torch

    from . import env as _env  # noqa: F401  (registers the id)
    from .icl import encode

    env = gym.make(_env.ENV_ID, size=size, goal=tuple(int(c) for c in goal), horizon=horizon,
                   render_mode="rgb_array", disable_env_checker=True)
    obs, _ = env.reset(seed=0, options={"start": start})
    ctx = {key: v[None] for key, v in context.items()}
    frames, total = [env.render()], 0.0
    for _ in range(horizon):
        with torch.no_grad():
            logits, _ = model(encode(dict(ctx, q=np.rint(obs).astype(np.int64)[None]), size))
        obs, r, term, trunc, _ = env.step(int(logits.argmax(-1)[0]))
        total += r
        frames.append(env.render())
        if term or trunc:
            break
    return total, frames


def replay(model, size, te_goals, te_pools, k, horizon, g6):
    """One rollout per held-out task (8 at most) through the gymnasium environment: (returns,
    frames per episode, whether they equal the batched loop's on the same contexts and starts)."""
    import numpy as np

    from .run import rollout_returns

    shown = min(len(te_goals), 8)
    starts6 = g6.integers(0, size, size=(shown, 2))
    j = g6.integers(0, te_pools["a"].shape[1], size=(shown, k))
    ctx6 = {key: val[np.arange(shown)[:, None], j] for key, val in te_pools.items()}
    env_rets, tiles = [], []
    for i in range(shown):
        r_i, fr = env_rollout(model, size, te_goals[i], {key: val[i] for key, val in ctx6.items()}, horizon, starts6[i])
        env_rets.append(r_i)
        tiles.append(fr)
    batched, _, _ = rollout_returns(model, size, te_goals[:shown], None, 1, k, horizon, g6, context=ctx6, starts=starts6)
    return env_rets, tiles, bool(np.array_equal(np.array(env_rets), batched))


def main() -> None:
    with stage("t2mir", "evaluate", PARAMS) as ctx:
        import io

        import numpy as np
        from PIL import Image

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics, run_seeds
        from stages.common.stats import t_interval

        from .icl import STUDY_VARIANTS, load_model, load_tasks
        from .run import evaluate_seed

        limit_threads()
        p, k = ctx.params.evaluate, ctx.params.train.k
        folder = ctx.path(MODELS)
        first = ctx.seeds[0]
        shown_tiles: dict = {}

        def one(seed: int) -> dict:
            tasks = load_tasks(ctx.path(TASKS), seed)
            models = {v: load_model(folder / f"s{seed}" / f"{v}.pt", folder / f"{v}.json")[0] for v in STUDY_VARIANTS}
            m, _ = evaluate_seed(models, tasks, k, p.queries_per_task, p.episodes_per_task, p.horizon, seed,
                                 p.train_queries_per_task)
            te_goals, te_pools = tasks["test"]
            env_rets, tiles, same = replay(models["t2mir"], tasks["size"], te_goals, te_pools, k, p.horizon,
                                           np.random.default_rng([seed, 1, 6]))
            m["env_return"], m["env_matches_batched"] = float(np.mean(env_rets)), same
            if seed == first:
                shown_tiles.update(tiles=tiles, size=tasks["size"], n_test=len(te_goals), env_return=m["env_return"])
            return m

        results = run_seeds(ctx.seeds, one, what="t2mir evaluate seed")
        metrics = per_seed_metrics(results)
        metrics["env_matches_batched"] = all(r["env_matches_batched"] for r in results.values())
        write_json(ctx.path(METRICS), metrics)

        rows = [{"method": v, "seed": s, **{key: results[s][v][key] for key in
                 ("heldout_accuracy", "shuffled_accuracy", "train_accuracy", "heldout_return", "shuffled_return")}}
                for v in STUDY_VARIANTS for s in ctx.seeds]
        write_csv(ctx.path(PLOT_DATA), rows)
        names = {"dense": "dense\n(param.-matched)", "uniform": "MoE without\nrouting (control)", "t2mir": "T2MIR"}
        x = np.arange(len(STUDY_VARIANTS))

        def seed_ci(values):
            v = np.asarray(values, dtype=float)
            if len(v) < 2 or v.std() == 0:
                return float(v.mean()), 0.0
            ci = t_interval(v, 0.95)
            return ci["mean"], ci["high"] - ci["mean"]

        fig, axes = new_figure(1, 2, figsize=(10, 3.8))
        for ax, key, ylabel in ((axes[0], "accuracy", "optimal-action accuracy"), (axes[1], "return", f"return ({p.horizon} steps)")):
            for off, kind, label in ((-0.2, "heldout", "own context"), (0.2, "shuffled", "shuffled context")):
                stats = [seed_ci([results[s][v][f"{kind}_{key}"] for s in ctx.seeds]) for v in STUDY_VARIANTS]
                ax.bar(x + off, [m for m, _ in stats], 0.38, yerr=[e for _, e in stats], capsize=3,
                       label=f"{label} (mean over seeds, 95% t)")
                for i, v in enumerate(STUDY_VARIANTS):
                    ax.plot([x[i] + off] * len(ctx.seeds), [results[s][v][f"{kind}_{key}"] for s in ctx.seeds],
                            "k.", ms=3)
            ax.set(xticks=x, ylabel=ylabel)
            ax.set_xticklabels([names[v] for v in STUDY_VARIANTS], fontsize=8)
        axes[1].axhline(metrics["random_return"], color="grey", ls=":", label="random policy")
        top = max(results[s][v]["heldout_return"] for s in ctx.seeds for v in STUDY_VARIANTS)
        axes[0].set(ylim=(0, 1.35), title=f"held-out tasks, {len(ctx.seeds)} seeds (dots)")
        axes[1].set(ylim=(0, 1.4 * top + 0.5), title="in-context rollouts on held-out tasks")
        for ax in axes:
            ax.legend(fontsize=7, loc="upper left")
        save_png(fig, ctx.path(PLOT))

        curves = np.load(folder / "losses.npz")
        fig, ax = new_figure(figsize=(5.5, 3.5))
        for i, v in enumerate(STUDY_VARIANTS):
            for j, s in enumerate(ctx.seeds):
                c = curves[f"s{s}/{v}"]
                w = max(1, len(c) // 25)
                ax.plot(np.convolve(c, np.ones(w) / w, mode="valid"), color=f"C{i}", alpha=0.7,
                        label=names[v].replace("\n", " ") if j == 0 else None)
        ax.set(xlabel="step", ylabel="training loss (smoothed)", title="t2mir: training, every seed")
        ax.legend(fontsize=8)
        save_png(fig, ctx.path(CURVES))

        tiles, shown = shown_tiles["tiles"], len(shown_tiles["tiles"])
        n_fr = min(p.gif_frames, min(len(t) for t in tiles))
        h, w = tiles[0][0].shape[:2]
        cols = min(shown, 4)
        rows_n = -(-shown // cols)

        def mosaic(t):
            canvas = np.full((rows_n * (h + 6) - 6, cols * (w + 6) - 6, 3), 255, dtype=np.uint8)
            for i in range(shown):
                r0, c0 = divmod(i, cols)
                canvas[r0 * (h + 6):r0 * (h + 6) + h, c0 * (w + 6):c0 * (w + 6) + w] = tiles[i][t]
            return canvas

        pics = [Image.fromarray(mosaic(t)) for t in range(n_fr)]
        buf = io.BytesIO()
        pics[0].save(buf, format="GIF", save_all=True, append_images=pics[1:], duration=200, loop=0)
        write_bytes(ctx.path(GIF), buf.getvalue())
        aspect = mosaic(0).shape[0] / mosaic(0).shape[1]
        fig, axes = new_figure(2, 2, figsize=(9, 2 * (4.3 * aspect + 0.45) + 0.4))
        for ax, t in zip(axes.flat, np.linspace(0, n_fr - 1, 4).round().astype(int)):
            ax.imshow(mosaic(t))
            ax.set(title=f"step {t}", xticks=[], yticks=[])
        fig.suptitle(f"T2MIR (seed {first}) in context on {shown} held-out tasks (green: goal, red: agent); "
                     f"mean return {shown_tiles['env_return']:.1f} over {p.horizon} steps", fontsize=9)
        save_png(fig, ctx.path(ROOM_PNG))
        ctx.run.log_metrics({f"{v}.{key}": metrics[v][key] for v in STUDY_VARIANTS
                             for key in ("heldout_accuracy", "shuffled_accuracy", "heldout_return")})
        print("  mean over seeds, held-out accuracy / return: " + "; ".join(
            f"{v} {metrics[v]['heldout_accuracy']:.3f} / {metrics[v]['heldout_return']:.2f}" for v in STUDY_VARIANTS)
            + f"; T2MIR - dense {metrics['t2mir_minus_dense']['return']:+.2f}, "
              f"uniform - dense {metrics['uniform_minus_dense']['return']:+.2f}", flush=True)


if __name__ == "__main__":
    main()
