"""webdancer evaluate: held-out Pass@1 (greedy, one attempt per question) by depth and steps used,
for every trained agent and a random-click agent, with paired t intervals of the differences the
claims read (same held-out questions for every agent); the plot, and one rendered episode.

Outputs: reports/webdancer/metrics.json (what claims.yaml checks), results.csv,
pass_by_depth.png with its data pass_by_depth.csv, and episode.png.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATA, EPISODE_PNG, METRICS, MODELS, PLOT, PLOT_DATA, RESULTS

AGENTS = ("sft", "sft_rl", "rl_scratch", "sft_rl_coin", "sft_equal")
LABELS = {"random": "random clicks", "sft": "SFT only", "sft_rl": "SFT + RL", "rl_scratch": "RL from scratch",
          "sft_rl_coin": "SFT + RL, coin reward", "sft_equal": "SFT on the RL data too (control)"}


def seed_metrics(lay, env, level: float, sites: dict, test: dict, pols: dict, seed: int) -> tuple[dict, dict]:
    """One seed's held-out figures (Pass@1 by depth, steps, paired t intervals of the differences
    over the held-out questions) and the agents' rollouts."""
    import numpy as np

    from stages.common.stats import t_interval

    from . import agent

    idx = np.arange(len(test["site"]))
    depth = test["depth"]
    out = {m: agent.rollout(pols[m], lay, sites["test"], test, idx, env.max_steps, None) for m in AGENTS}
    out["random"] = agent.random_agent(lay, sites["test"], test, idx, env.max_steps, np.random.default_rng([seed, 7]))
    depths = list(range(1, env.depth + 1))
    metrics = {"pass1": {}, "steps": {}}
    for m in ("random", *AGENTS):
        r, s = out[m]["reward"], out[m]["steps"]
        metrics["pass1"][m] = {"all": float(r.mean()), **{f"d{d}": float(r[depth == d].mean()) for d in depths}}
        metrics["steps"][m] = float(s.mean())

    def diff(a, b, sel=None):
        x = out[a]["reward"] - out[b]["reward"]
        return t_interval(x if sel is None else x[sel], level)

    deep, shallow = depth == depths[-1], depth == depths[0]
    metrics["rl_gain"] = diff("sft_rl", "sft")                         # the must
    metrics["equal_sft_gain"] = diff("sft_equal", "sft")               # its control (RL replaced by SFT on RL's data)
    metrics["rl_over_equal_sft"] = diff("sft_rl", "sft_equal")
    metrics["coin_gain"] = diff("sft_rl_coin", "sft")
    metrics["cold_start_gain"] = diff("sft_rl", "rl_scratch")
    g_deep, g_shallow = diff("sft_rl", "sft", deep), diff("sft_rl", "sft", shallow)
    metrics["rl_gain_deepest"], metrics["rl_gain_shallowest"] = g_deep, g_shallow
    metrics["rl_gain_deep_minus_shallow"] = g_deep["mean"] - g_shallow["mean"]
    metrics["sft_minus_random"] = diff("sft", "random")
    return metrics, out


def main() -> None:
    with stage("webdancer", "evaluate", PARAMS) as ctx:
        import io

        import numpy as np
        import torch
        from PIL import Image

        from stages.common.io import write_bytes, write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from . import agent
        from .web import Batch, Layout, render_site

        from stages.common.seeds import per_seed_metrics, run_seeds

        env, level = ctx.params.env, ctx.params.evaluate.level
        lay = Layout(env.k, env.depth, env.n_topics, env.n_values)
        depths = list(range(1, env.depth + 1))
        first = ctx.seeds[0]
        keep = {}

        def one(seed: int) -> dict:
            sites, qs, _ = agent.load_data(ctx.path(DATA), seed)
            pols = {m: agent.load_files(ctx.path(MODELS) / str(seed) / m / "artifacts" / "weights.pt",
                                        ctx.path(MODELS) / str(seed) / m / "artifacts" / "config.json") for m in AGENTS}
            m, _ = seed_metrics(lay, env, level, sites, qs["test"], pols, seed)
            if seed == first:
                keep.update(sites=sites, test=qs["test"], pol=pols["sft_rl"])
            print(f"  seed {seed}: SFT+RL - SFT {m['rl_gain']['mean']:+.3f}, equal-data SFT - SFT "
                  f"{m['equal_sft_gain']['mean']:+.3f}, coin {m['coin_gain']['mean']:+.3f}", flush=True)
            return m

        per = run_seeds(ctx.seeds, one, what="seed")
        metrics = per_seed_metrics(per)
        names = ("random", *AGENTS)
        rows, plot_rows = [], []
        for s in ctx.seeds:
            for m in names:
                for d in ("all", *depths):
                    key = "all" if d == "all" else f"d{d}"
                    rows.append({"seed": s, "agent": m, "depth": d, "pass1": per[s]["pass1"][m][key]})
        for m in names:
            for d in depths:
                plot_rows.append({"depth": d, "agent": LABELS[m], "pass1": metrics["pass1"][m][f"d{d}"]})
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(RESULTS), rows)
        write_csv(ctx.path(PLOT_DATA), plot_rows)
        ctx.run.log_metrics({f"pass1.{m}": v["all"] for m, v in metrics["pass1"].items()})

        fig, ax = new_figure(figsize=(6.4, 3.8))
        names = ("random", *AGENTS)
        w = 0.8 / len(names)
        for i, m in enumerate(names):
            vals = [metrics["pass1"][m][f"d{d}"] for d in depths]
            ax.bar(np.array(depths) + (i - (len(names) - 1) / 2) * w, vals, w, label=LABELS[m])
        ax.set(xticks=depths, xlabel="question depth (clicks from the home page)", ylabel="held-out Pass@1",
               title=f"webdancer: held-out Pass@1 by depth (mean over seeds {ctx.seeds})", ylim=(0, 1))
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT))

        # one held-out deepest-question episode of SFT+RL (first verdict seed), frame by frame
        test = keep["test"]
        j = int(np.flatnonzero(test["depth"] == depths[-1])[0])
        b = Batch(lay, keep["sites"]["test"], test, np.array([j]), env.max_steps)
        frames = [render_site(lay, b.label[0], int(b.page[0]), int(b.target[0]))]
        with torch.no_grad():
            while not b.done[0]:
                b.step(keep["pol"](torch.as_tensor(b.obs())).argmax(1).numpy())
                frames.append(render_site(lay, b.label[0], int(b.page[0]), int(b.target[0])))
        gap = np.full((frames[0].shape[0], 4, 3), 255, np.uint8)
        strip = np.concatenate([x for f in frames for x in (f, gap)][:-1], 1)
        buf = io.BytesIO()
        Image.fromarray(strip).save(buf, format="PNG")
        write_bytes(ctx.path(EPISODE_PNG), buf.getvalue())
        print("  Pass@1 (mean over seeds): " + ", ".join(f"{m} {metrics['pass1'][m]['all']:.3f}" for m in names),
              flush=True)


if __name__ == "__main__":
    main()
