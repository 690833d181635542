"""rl_vla evaluate: per verdict seed, every policy of that seed on every split's evaluation episodes
(the same reset seeds and the same sampling stream for every method: paired), success rates, the
paired differences the claims check, plots, and a rendered rollout (GIF and PNG) of the environment.

A seed's figure of a claim is the difference of two methods' success rates over that seed's
evaluation episodes (e.g. ``ppo_minus_sft.semantic``); claims.yaml judges the per-seed figures over
the verdict seeds (docs/VERDICTS.md). Within a seed, the paired t interval over the episodes is
written as context (``*_ci``), not judged.

Outputs: reports/rl_vla/metrics.json (per_seed, their means, what claims.yaml checks), results.csv
(success per seed, method and split), success_by_shift.png and its data success_by_shift.csv (mean
over seeds), rollout.gif and rollout.png (the first seed's PPO on the execution split).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import EPISODES, METRICS, MODELS, PLOT, PLOT_DATA, RESULTS, ROLLOUT_GIF, ROLLOUT_PNG

METHODS = ("sft", "ppo", "sft_more", "grpo", "dpo")
SPLITS = ("train", "visual", "semantic", "execution", "unseen_word")
PAIRS = (("ppo", "sft"), ("sft_more", "sft"), ("grpo", "sft"), ("dpo", "sft"),
         ("ppo", "grpo"), ("ppo", "dpo"), ("ppo", "sft_more"))


def paired(a, b, level: float) -> dict:
    """Mean of a - b over the same episodes (success 0/1 each) and its t interval."""
    import numpy as np

    from stages.common.stats import t_interval

    d = np.asarray(a, float) - np.asarray(b, float)
    ci = t_interval(d, level)
    return {"mean": float(d.mean()), "low": ci["low"], "high": ci["high"]}


def summarise(success: dict, level: float = 0.95) -> dict:
    """One seed's figures from per-episode successes ``success[method][split]`` (0/1 arrays):
    ``success.<method>.<split>``, ``<a>_minus_<b>.<split>`` (paired difference of success rates)
    and its within-seed interval ``<a>_minus_<b>_ci.<split>`` (context)."""
    import numpy as np

    out = {"success": {m: {s: float(np.mean(v)) for s, v in by.items()} for m, by in success.items()}}
    for a, b in PAIRS:
        if a in success and b in success:
            d = {s: paired(success[a][s], success[b][s], level) for s in success[a]}
            out[f"{a}_minus_{b}"] = {s: v["mean"] for s, v in d.items()}
            out[f"{a}_minus_{b}_ci"] = {s: {"low": v["low"], "high": v["high"]} for s, v in d.items()}
    for m in success:                                 # robustness: success on a shift over in-distribution
        sm = out["success"][m]
        if all(s in sm for s in ("train", "visual", "semantic", "execution")):
            sm["mean_ood"] = float(np.mean([sm[s] for s in ("visual", "semantic", "execution")]))
            sm["visual_over_train"] = sm["visual"] / sm["train"] if sm["train"] > 0 else None
    return out


def evaluate_seed(policies: dict, episodes: dict, p, seed: int, splits=SPLITS) -> dict:
    """Per-episode successes ``{method: {split: 0/1 array}}`` of one seed's policies on that seed's
    evaluation episodes, actions sampled at the evaluation temperature; every method draws from the
    same sampling stream (``torch_generator(seed, 5)`` per split)."""
    from stages.common.seeds import torch_generator

    from . import methods

    env_kw = p.env.model_dump()
    return {m: {s: methods.rollout(pol, s, episodes[s], env_kw, temperature=p.evaluate.temperature,
                                   gen=torch_generator(seed, 5, i))["success"]
                for i, s in enumerate(splits)} for m, pol in policies.items()}


def rollout_frames(policy, split: str, seed: int, env_kw: dict, steps: int):
    """Global renderings of one greedy episode."""
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
    return frames, env.ep


def main() -> None:
    with stage("rl_vla", "evaluate", PARAMS) as ctx:
        import io
        import json
        import time

        import numpy as np
        from PIL import Image

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        from .policy import load_files

        limit_threads()
        p = ctx.params
        env_kw = p.env.model_dump()
        all_eps = json.loads(ctx.path(EPISODES).read_text())["seeds"]
        results, rows, t_all = {}, [], time.perf_counter()
        first_ppo = None
        for i, seed in enumerate(ctx.seeds):
            if str(seed) not in all_eps:
                raise ValueError(f"{EPISODES} holds no episodes for seed {seed}: run rl_vla-prepare for this profile")
            eps = all_eps[str(seed)]
            folder = ctx.path(MODELS) / str(seed)
            policies = {m: load_files(folder / m / "artifacts" / "weights.pt", folder / m / "artifacts" / "config.json")
                        for m in METHODS}
            success = evaluate_seed(policies, eps, p, seed)
            results[seed] = summarise(success, p.evaluate.level)
            if first_ppo is None:
                first_ppo = (policies["ppo"], eps["execution"][0])
            for m in METHODS:
                for s in SPLITS:
                    rows.append({"seed": seed, "split": s, "method": m, "success": float(np.mean(success[m][s]))})
            d = results[seed]["ppo_minus_sft"]
            c = results[seed]["sft_more_minus_sft"]
            print(f"  seed {seed} ({i + 1}/{len(ctx.seeds)}, total {time.perf_counter() - t_all:.1f}s): PPO - SFT "
                  f"semantic {d['semantic']:+.3f}, execution {d['execution']:+.3f}, visual {d['visual']:+.3f}; "
                  f"control sft_more - SFT semantic {c['semantic']:+.3f}, execution {c['execution']:+.3f}", flush=True)
        metrics = per_seed_metrics(results, eval_episodes_per_split=p.prepare.n_eval)
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(RESULTS), rows)
        mean = metrics["success"]
        write_csv(ctx.path(PLOT_DATA), [{"split": s, "method": m, "success": mean[m][s]} for m in METHODS for s in SPLITS])

        fig, ax = new_figure(figsize=(8, 3.6))
        width = 0.8 / len(METHODS)
        for k, m in enumerate(METHODS):
            x = np.arange(len(SPLITS)) + (k - (len(METHODS) - 1) / 2) * width
            per = np.array([[r["success"] for r in rows if r["method"] == m and r["split"] == s] for s in SPLITS])
            ax.bar(x, per.mean(1), width, yerr=[per.mean(1) - per.min(1), per.max(1) - per.mean(1)], capsize=2, label=m)
        ax.set_xticks(np.arange(len(SPLITS)), [s.replace("_", " ") for s in SPLITS])
        ax.set_ylabel("success rate")
        ax.set_title(f"rl_vla: success by split, mean over seeds {list(ctx.seeds)} (bars: min to max)")
        ax.legend(ncol=5, fontsize=7, loc="upper right")
        ax.set_ylim(0, 1.05)
        save_png(fig, ctx.path(PLOT))

        frames, ep = rollout_frames(first_ppo[0], "execution", first_ppo[1], env_kw, p.evaluate.gif_steps)
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
        fig.suptitle(f"PPO (seed {ctx.seeds[0]}), execution split: put the {ep['block']} block on the {ep['plate']} plate",
                     fontsize=9)
        save_png(fig, ctx.path(ROLLOUT_PNG))


if __name__ == "__main__":
    main()
