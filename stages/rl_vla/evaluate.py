"""rl_vla evaluate: every policy on every split's evaluation episodes (the same reset seeds for every
method: paired), success rates with intervals, the paired differences the claims check, plots, and a
rendered rollout (GIF and PNG) of the environment.

Outputs: reports/rl_vla/metrics.json (what claims.yaml checks), results.csv (success per method and
split), success_by_shift.png and its data success_by_shift.csv, rollout.gif and rollout.png.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import EPISODES, METRICS, MODELS, PLOT, PLOT_DATA, RESULTS, ROLLOUT_GIF, ROLLOUT_PNG

METHODS = ("sft", "ppo", "ppo_short", "grpo", "dpo")
SPLITS = ("train", "visual", "semantic", "execution", "unseen_word")


def paired(a, b, level: float) -> dict:
    """Mean of a - b over the same episodes (success 0/1 each) and its t interval."""
    import numpy as np

    from stages.common.stats import t_interval

    d = np.asarray(a, float) - np.asarray(b, float)
    ci = t_interval(d, level)
    return {"mean": float(d.mean()), "low": ci["low"], "high": ci["high"]}


def summarise(success: dict, level: float) -> dict:
    """The claims' figures from per-episode successes ``success[method][split]`` (0/1 arrays)."""
    import numpy as np

    out = {"success": {m: {s: float(np.mean(v)) for s, v in by.items()} for m, by in success.items()}}
    for other in ("sft", "grpo", "dpo"):
        out[f"ppo_minus_{other}"] = {s: paired(success["ppo"][s], success[other][s], level) for s in SPLITS}
    out["ppo_short_minus_sft"] = {s: paired(success["ppo_short"][s], success["sft"][s], level) for s in SPLITS}
    for m in METHODS:                                 # robustness: success on a shift over in-distribution
        tr = out["success"][m]["train"]
        out["success"][m]["mean_ood"] = float(np.mean([out["success"][m][s] for s in ("visual", "semantic", "execution")]))
        out["success"][m]["visual_over_train"] = out["success"][m]["visual"] / tr if tr > 0 else None
    return out


def rollout_frames(policy, split: str, seed: int, env_kw: dict, steps: int):
    """Global renderings of one greedy episode."""
    import numpy as np

    from .env import PickPlaceEnv
    from .policy import greedy_actions

    env = PickPlaceEnv(split=split, render_mode="rgb_array", **env_kw)
    obs, _ = env.reset(seed=seed)
    frames = [env.render()]
    for _ in range(steps - 1):
        a = greedy_actions(policy, obs["image"][None], obs["instruction"][None])[0]
        obs, _, term, trunc, _ = env.step(int(a))
        frames.append(env.render())
        if term or trunc:
            break
    return frames, env.ep, np.uint8


def main() -> None:
    with stage("rl_vla", "evaluate", PARAMS) as ctx:
        import io
        import json

        import numpy as np
        from PIL import Image

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from . import methods
        from .policy import load_files

        limit_threads()
        p = ctx.params.evaluate
        env_kw = ctx.params.env.model_dump()
        seeds = json.loads(ctx.path(EPISODES).read_text())["seeds"]
        policies = {m: load_files(ctx.path(MODELS) / m / "artifacts" / "weights.pt",
                                  ctx.path(MODELS) / m / "artifacts" / "config.json") for m in METHODS}
        import torch

        success = {}
        for m in METHODS:
            gen = torch.Generator().manual_seed(ctx.seed)
            success[m] = {s: methods.rollout(policies[m], s, seeds[s], env_kw, temperature=p.temperature, gen=gen)["success"]
                          for s in SPLITS}
            print(f"  {m:10s} " + " ".join(f"{s} {np.mean(v):.3f}" for s, v in success[m].items()), flush=True)
        metrics = summarise(success, p.level)
        metrics["eval_episodes_per_split"] = len(seeds["train"])
        write_json(ctx.path(METRICS), metrics)

        from stages.common.stats import t_interval

        rows = []
        for m in METHODS:
            for s in SPLITS:
                v = success[m][s].astype(float)
                ci = t_interval(v, p.level) if v.std() > 0 else {"low": float(v.mean()), "high": float(v.mean())}
                rows.append({"split": s, "method": m, "success": float(v.mean()), "low": ci["low"], "high": ci["high"]})
        write_csv(ctx.path(RESULTS), rows)
        write_csv(ctx.path(PLOT_DATA), [{"split": r["split"], "method": r["method"], "success": r["success"]} for r in rows])

        fig, ax = new_figure(figsize=(8, 3.6))
        width = 0.8 / len(METHODS)
        for i, m in enumerate(METHODS):
            rs = [r for r in rows if r["method"] == m]
            x = np.arange(len(SPLITS)) + (i - (len(METHODS) - 1) / 2) * width
            y = np.array([r["success"] for r in rs])
            err = np.array([[r["success"] - r["low"] for r in rs], [r["high"] - r["success"] for r in rs]])
            ax.bar(x, y, width, yerr=err, capsize=2, label=m)
        ax.set_xticks(np.arange(len(SPLITS)), [s.replace("_", " ") for s in SPLITS])
        ax.set_ylabel("success rate")
        ax.set_title(f"rl_vla: success by split ({len(seeds['train'])} episodes each, {int(p.level * 100)}% t intervals)")
        ax.legend(ncol=5, fontsize=8, loc="upper right")
        ax.set_ylim(0, 1.05)
        save_png(fig, ctx.path(PLOT))

        frames, ep, _ = rollout_frames(policies["ppo"], "execution", seeds["execution"][0], env_kw, p.gif_steps)
        ims = [Image.fromarray(f) for f in frames]
        buf = io.BytesIO()
        ims[0].save(buf, format="GIF", save_all=True, append_images=ims[1:], duration=300, loop=0)
        write_bytes(ctx.path(ROLLOUT_GIF), buf.getvalue())
        fig, axes = new_figure(1, min(6, len(frames)), figsize=(2 * min(6, len(frames)), 2.3))
        axes = np.atleast_1d(axes)
        idx = np.linspace(0, len(frames) - 1, len(axes)).round().astype(int)
        for a, k in zip(axes, idx):
            a.imshow(frames[k])
            a.set_title(f"t={k}", fontsize=8)
            a.axis("off")
        fig.suptitle(f"PPO, execution split: put the {ep['block']} block on the {ep['plate']} plate", fontsize=9)
        save_png(fig, ctx.path(ROLLOUT_PNG))
        s = metrics["ppo_minus_sft"]
        print(f"  PPO - SFT: semantic {s['semantic']['mean']:+.3f}, execution {s['execution']['mean']:+.3f}, "
              f"visual {s['visual']['mean']:+.3f}", flush=True)


if __name__ == "__main__":
    main()
