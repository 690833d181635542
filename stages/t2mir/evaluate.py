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

from stages.common.stage import fail, stage

from .params import PARAMS
from .paths import CURVES, GIF, METRICS, MODELS, PLOT, PLOT_DATA, ROOM_PNG, TASKS, TRAIN_METRICS
from .train import load_tasks


def env_rollout(model, size, goal, pools_one, k, horizon, start, rng):
    """One greedy in-context episode through the gymnasium environment (``t2mir/DarkRoom-v0``):
    (return, rgb frames). ``pools_one`` is the task's in-context dataset (arrays without the task axis)."""
    import gymnasium as gym
    import numpy as np
    import torch

    from . import env as _env  # noqa: F401  (registers the id)
    from .icl import encode

    env = gym.make(_env.ENV_ID, size=size, goal=tuple(int(c) for c in goal), horizon=horizon,
                   render_mode="rgb_array", disable_env_checker=True)
    obs, _ = env.reset(seed=0, options={"start": start})
    j = rng.integers(0, len(pools_one["a"]), size=k)
    ctx = {key: v[j][None] for key, v in pools_one.items()}
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
        import json

        import numpy as np
        import torch
        from PIL import Image

        from stages.common.io import write_bytes, write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.stats import t_interval

        from .icl import VARIANTS, load_model
        from .run import action_accuracy, oracle_returns, random_returns, rollout_returns

        for rel, step in ((TASKS, "prepare"), (MODELS, "train")):
            if not ctx.path(rel).exists():
                fail(f"{rel} is missing; run `dvc repro stages/t2mir/dvc.yaml:t2mir-{step}` first")
        torch.set_num_threads(1)
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

        # one rollout through the gymnasium environment, rendered; its return checks the batched loop
        one = {key: val[0] for key, val in te_pools.items()}
        start = np.array([0, 0]) if tuple(te_goals[0]) != (0, 0) else np.array([size - 1, size - 1])
        env_ret, frames = env_rollout(models["t2mir"], size, te_goals[0], one, k, p.horizon, start, gen(6))
        g1 = gen(6)                                       # the same context draw, replayed batched
        j = g1.integers(0, len(one["a"]), size=k)
        replay = {key: val[j][None] for key, val in one.items()}
        batched, _, _ = rollout_returns(models["t2mir"], size, te_goals[:1], None, 1, k, p.horizon, g1,
                                        context=replay, starts=start[None])
        metrics["env_return"], metrics["env_matches_batched"] = float(env_ret), bool(env_ret == batched[0])
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
        axes[1].legend(fontsize=7, loc="upper left", ncol=2)
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

        frames = frames[:p.gif_frames]
        pics = [Image.fromarray(f) for f in frames]
        buf = io.BytesIO()
        pics[0].save(buf, format="GIF", save_all=True, append_images=pics[1:], duration=200, loop=0)
        write_bytes(ctx.path(GIF), buf.getvalue())
        strip = frames[:: max(1, len(frames) // 8)][:8]
        gap = np.full((strip[0].shape[0], 6, 3), 255, dtype=np.uint8)
        Image.fromarray(np.concatenate(sum(([f, gap] for f in strip), [])[:-1], axis=1)).save(buf2 := io.BytesIO(),
                                                                                              format="PNG")
        write_bytes(ctx.path(ROOM_PNG), buf2.getvalue())
        tm = json.loads(ctx.path(TRAIN_METRICS).read_text()) if ctx.path(TRAIN_METRICS).exists() else {}
        ctx.run.log_metrics({f"{v}.{key}": metrics[v][key] for v in VARIANTS
                             for key in ("heldout_accuracy", "shuffled_accuracy", "heldout_return")})
        print("  held-out accuracy / return: " + "; ".join(
            f"{v} {metrics[v]['heldout_accuracy']:.3f} / {metrics[v]['heldout_return']:.2f}" for v in VARIANTS)
            + f"; shuffled T2MIR {metrics['t2mir']['shuffled_accuracy']:.3f}; random {metrics['random_return']:.2f}"
            + (f"; train CPU {sum(m['cpu_s'] for m in tm.values()):.0f} s" if tm else ""), flush=True)


if __name__ == "__main__":
    main()
