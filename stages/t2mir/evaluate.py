"""t2mir evaluate: each variant on the held-out tasks (goal cells no training context came from).

Per variant: the action accuracy at uniform query cells with a context from the task's own
in-context dataset, the same with a context from another held-out task (the shuffled-context
control: no usable in-context information, so the accuracy falls to what the query cell alone
gives), the same on the training tasks, and the return of greedy in-context rollouts (one
forward per step for all episodes), again with own and shuffled contexts. Every variant sees the
same contexts, queries and start cells (one generator seeded alike per variant), so differences
between variants are paired. Also: the random policy's and the optimal policy's return from the
same starts, one rollout replayed through the gymnasium environment (its return must equal the
batched one) and rendered to a GIF and a PNG strip.

Outputs: reports/t2mir/metrics.json (what claims.yaml checks), heldout.png / heldout.csv
(accuracy and return per variant with the controls), loss.png (training curves), rollout.gif and
rollout.png (T2MIR in context on a held-out task, drawn by the environment's rgb_array render).
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


def main() -> None:
    with stage("t2mir", "evaluate", PARAMS) as ctx:
        import io

        import numpy as np
        from PIL import Image

        from stages.common.io import write_bytes, write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.stats import t_interval

        from .icl import VARIANTS, load_model, load_tasks
        from .run import action_accuracy, oracle_returns, random_returns, rollout_returns

        from stages.common.device import limit_threads

        limit_threads()
        tasks = load_tasks(ctx.path(TASKS))
        size = tasks["size"]
        (tr_goals, tr_pools), (te_goals, te_pools) = tasks["train"], tasks["test"]
        p, k = ctx.params.evaluate, ctx.params.train.k
        folder = ctx.path(MODELS)
        models = {v: load_model(folder / f"{v}.pt", folder / f"{v}.json")[0] for v in VARIANTS}

        def gen(i):
            return np.random.default_rng([ctx.seed, 1, i])

        metrics: dict = {}
        returns = {}
        for v, m in models.items():
            r, ti, starts = rollout_returns(m, size, te_goals, te_pools, p.episodes_per_task, k, p.horizon, gen(3))
            r_sh, *_ = rollout_returns(m, size, te_goals, te_pools, p.episodes_per_task, k, p.horizon, gen(4),
                                       shuffle_context=True)
            returns[v] = r
            acc = action_accuracy(m, size, te_goals, te_pools, p.queries_per_task, k, gen(0))
            acc_sh = action_accuracy(m, size, te_goals, te_pools, p.queries_per_task, k, gen(1), shuffle_context=True)
            ci = t_interval(r, 0.95)
            metrics[v] = {"heldout_accuracy": acc, "shuffled_accuracy": acc_sh,
                          "train_accuracy": action_accuracy(m, size, tr_goals, tr_pools, p.queries_per_task, k, gen(2)),
                          "icl_accuracy_gain": acc - acc_sh,
                          "heldout_return": ci["mean"], "heldout_return_low": ci["low"], "heldout_return_high": ci["high"],
                          "shuffled_return": float(r_sh.mean()), "icl_return_gain": float(r.mean() - r_sh.mean())}
        metrics["random_return"] = float(random_returns(size, te_goals, p.episodes_per_task, p.horizon, gen(5)).mean())
        metrics["oracle_return"] = float(oracle_returns(te_goals, starts, ti, p.horizon).mean())
        for v in ("token", "task", "t2mir"):
            d = returns[v] - returns["dense"]
            ci = t_interval(d, 0.95) if d.std() > 0 else {"low": float(d.mean()), "high": float(d.mean())}
            metrics[f"{v}_minus_dense"] = {
                "return": float(d.mean()), "return_low": ci["low"], "return_high": ci["high"],
                "accuracy": metrics[v]["heldout_accuracy"] - metrics["dense"]["heldout_accuracy"]}
        metrics["goal_overlap"] = len({tuple(g) for g in tr_goals} & {tuple(g) for g in te_goals})
        metrics["n_test_tasks"], metrics["n_train_tasks"] = len(te_goals), len(tr_goals)

        # one rollout per held-out task (8 at most) through the gymnasium environment, rendered; the
        # returns must equal the batched loop's on the same contexts and start cells
        g6 = gen(6)
        shown = min(len(te_goals), 8)
        starts6 = g6.integers(0, size, size=(shown, 2))
        j = g6.integers(0, te_pools["a"].shape[1], size=(shown, k))
        replay = {key: val[np.arange(shown)[:, None], j] for key, val in te_pools.items()}
        env_rets, tiles = [], []
        for i in range(shown):
            r_i, fr = env_rollout(models["t2mir"], size, te_goals[i], {key: val[i] for key, val in replay.items()},
                                  p.horizon, starts6[i])
            env_rets.append(r_i)
            tiles.append(fr)
        batched, _, _ = rollout_returns(models["t2mir"], size, te_goals[:shown], None, 1, k, p.horizon, g6,
                                        context=replay, starts=starts6)
        metrics["env_return"] = float(np.mean(env_rets))
        metrics["env_matches_batched"] = bool(np.array_equal(np.array(env_rets), batched))
        write_json(ctx.path(METRICS), metrics)

        rows = [{"method": v, "heldout_accuracy": metrics[v]["heldout_accuracy"],
                 "shuffled_accuracy": metrics[v]["shuffled_accuracy"], "train_accuracy": metrics[v]["train_accuracy"],
                 "heldout_return": metrics[v]["heldout_return"], "shuffled_return": metrics[v]["shuffled_return"]}
                for v in VARIANTS]
        write_csv(ctx.path(PLOT_DATA), rows)
        names = {"dense": "dense", "token": "token MoE", "task": "task MoE\n+contrastive", "t2mir": "T2MIR"}
        x = np.arange(len(VARIANTS))
        fig, axes = new_figure(1, 2, figsize=(10, 3.8))
        axes[0].bar(x - 0.2, [metrics[v]["heldout_accuracy"] for v in VARIANTS], 0.38, label="own context")
        axes[0].bar(x + 0.2, [metrics[v]["shuffled_accuracy"] for v in VARIANTS], 0.38, label="shuffled context")
        axes[0].set(xticks=x, xticklabels=[names[v] for v in VARIANTS], ylim=(0, 1.1), ylabel="optimal-action accuracy",
                    title=f"held-out tasks ({len(te_goals)} goals, {size}x{size})")
        axes[0].legend(fontsize=8, loc="upper right", ncol=2)
        mean = np.array([metrics[v]["heldout_return"] for v in VARIANTS])
        err = np.array([[mean[i] - metrics[v]["heldout_return_low"], metrics[v]["heldout_return_high"] - mean[i]]
                        for i, v in enumerate(VARIANTS)]).T
        axes[1].bar(x - 0.2, mean, 0.38, yerr=err, capsize=3, label="own context (95% t)")
        axes[1].bar(x + 0.2, [metrics[v]["shuffled_return"] for v in VARIANTS], 0.38, label="shuffled context")
        axes[1].axhline(metrics["random_return"], color="grey", ls=":", label="random policy")
        axes[1].axhline(metrics["oracle_return"], color="k", ls="--", label="optimal policy")
        axes[1].set(xticks=x, xticklabels=[names[v] for v in VARIANTS], ylabel=f"return ({p.horizon} steps)",
                    title="in-context rollouts on held-out tasks")
        axes[1].legend(fontsize=7, loc="center right")
        save_png(fig, ctx.path(PLOT))

        curves = np.load(folder / "losses.npz")
        fig, ax = new_figure(figsize=(5.5, 3.5))
        for v in VARIANTS:
            c = curves[v]
            w = max(1, len(c) // 25)
            ax.plot(np.convolve(c, np.ones(w) / w, mode="valid"), label=names[v].replace("\n", " "))
        ax.set(xlabel="step", ylabel="training loss (smoothed)", title="t2mir: training")
        ax.legend(fontsize=8)
        save_png(fig, ctx.path(CURVES))

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
        fig.suptitle(f"T2MIR in context on {shown} held-out tasks (green: goal, red: agent); "
                     f"mean return {metrics['env_return']:.1f} over {p.horizon} steps", fontsize=9)
        save_png(fig, ctx.path(ROOM_PNG))
        ctx.run.log_metrics({f"{v}.{key}": metrics[v][key] for v in VARIANTS
                             for key in ("heldout_accuracy", "shuffled_accuracy", "heldout_return")})
        print("  held-out accuracy / return: " + "; ".join(
            f"{v} {metrics[v]['heldout_accuracy']:.3f} / {metrics[v]['heldout_return']:.2f}" for v in VARIANTS)
            + f"; shuffled T2MIR {metrics['t2mir']['shuffled_accuracy']:.3f}; random {metrics['random_return']:.2f}",
            flush=True)


if __name__ == "__main__":
    main()
