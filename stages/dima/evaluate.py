"""dima evaluate: prediction errors on held-out trajectories, return of planning in imagination,
the plots and a rendered episode.

* Rollout error: every model imagines H steps open loop from every held-out window (the logged
  actions), and the MSE of its state against the real one (raw units, mean over the state's
  coordinates and windows) is taken at each horizon 1..H, for the main run and both controls.
* Return in imagination: a receding-horizon CEM planner through each main-run model (the model's
  own predicted rewards) plays ``episodes`` real simple_spread episodes; so do the random policy and
  the noise-free heuristic and the same planner through the exact physics (no collisions) and
  closed-form reward ("mpc_true", the reference), on the same env seeds (paired); the SB3 PPO
  baseline's return (baseline stage, same seeds) joins the table and the plot.
* A real episode of the planner through the DIMA (seq) model is rendered (``rgb_array``) to a GIF
  and a five-frame PNG strip.

Outputs: reports/dima/metrics.json (what claims.yaml checks), rollout_mse.png/.csv, returns.png/.csv,
episode.gif, episode.png.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import (BASELINE_METRICS, CONFIG, DATA, METRICS, PLOT, PLOT_DATA, RENDER_GIF, RENDER_PNG, RETURN_DATA, RETURN_PLOT,
                    WEIGHTS)

POLICIES = ("random", "heuristic", "mpc_true", "mpc_joint", "mpc_seq")


def render_episode(policy, n: int, max_cycles: int, seed: int, size: int = 200):
    """Frames (PIL images) of one real episode of ``policy``, rendered by simple_spread itself."""
    import numpy as np
    from PIL import Image

    from .env import make_parallel, physical_state

    env = make_parallel(n, max_cycles, render_mode="rgb_array")
    env.reset(seed=seed)
    frames = [Image.fromarray(env.render()).resize((size, size))]
    for _ in range(max_cycles):
        a = np.asarray(policy(physical_state(env))).reshape(-1)
        env.step({ag: int(a[i]) for i, ag in enumerate(env.agents)})
        if not env.agents:
            break
        frames.append(Image.fromarray(env.render()).resize((size, size)))
    env.close()
    return frames


def main() -> None:
    with stage("dima", "evaluate", PARAMS) as ctx:
        import io
        import json

        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.stats import t_interval

        from .env import N_ACTIONS, heuristic_actions
        from .plan import ExactDynamics, cem_plan, eval_seeds, evaluate_policy
        from .pyfunc_io import load_models
        from .wm import nest, reward_mse, rollout_mse

        limit_threads()
        arrays = np.load(ctx.path(DATA))
        models = load_models(ctx.path(WEIGHTS), ctx.path(CONFIG))
        p, pp = ctx.params.evaluate, ctx.params.prepare
        H = p.horizon
        m: dict = {"horizon": H, "n_agents": pp.n_agents, "control_agents": pp.control_agents}
        rows = []
        for key, model in models.items():
            run, kind = key.split(".")
            pre = f"{run}_test_"
            test = {k[len(pre):]: arrays[k] for k in arrays.files if k.startswith(pre)}
            curve = rollout_mse(model, test, H)
            m[f"{key}.mse_h1"], m[f"{key}.mse_at_H"] = float(curve[0]), float(curve[-1])
            m[f"{key}.mse_mean_1_to_H"] = float(curve.mean())
            m[f"{key}.reward_mse"] = reward_mse(model, test)
            rows += [{"setup": run, "model": kind, "horizon": h + 1, "mse": float(v)} for h, v in enumerate(curve)]
        for run in ("main", "control", "rich"):
            for what in ("mse_h1", "mse_at_H", "mse_mean_1_to_H"):
                m[f"{run}.seq_over_joint.{what}"] = m[f"{run}.seq.{what}"] / m[f"{run}.joint.{what}"]
        for what in ("mse_h1", "mse_at_H"):
            m[f"main.seq_over_joint_chain.{what}"] = m[f"main.seq.{what}"] / m[f"main.joint_chain.{what}"]

        # return of planning in imagination, in the real env (paired seeds)
        rng = np.random.default_rng([ctx.seed, 77])
        seeds = eval_seeds(ctx.seed, p.episodes)
        n, pl = pp.n_agents, p.plan

        def planner(model):
            return lambda s: cem_plan(model, s, n, pl.horizon, pl.candidates, pl.elites, pl.iterations, rng)

        policies = {"random": lambda s: rng.integers(0, N_ACTIONS, n), "heuristic": lambda s: heuristic_actions(s, n),
                    "mpc_true": planner(ExactDynamics(n)), "mpc_joint": planner(models["main.joint"]),
                    "mpc_seq": planner(models["main.seq"])}
        returns = {}
        for name in tqdm(POLICIES, desc="dima: real-env returns", mininterval=2):
            returns[name] = evaluate_policy(policies[name], n, pp.max_cycles, seeds)
        ret_rows = []
        for name, r in returns.items():
            ci = t_interval(r, 0.95) if len(r) > 1 else {"mean": float(r[0]), "low": float(r[0]), "high": float(r[0])}
            m[f"return.{name}.mean"], m[f"return.{name}.ci_low"], m[f"return.{name}.ci_high"] = ci["mean"], ci["low"], ci["high"]
            ret_rows.append({"policy": name, "return_mean": ci["mean"], "ci_low": ci["low"], "ci_high": ci["high"]})
        ppo = json.loads(ctx.path(BASELINE_METRICS).read_text())["ppo"]
        m["return.ppo.mean"], m["return.ppo.ci_low"], m["return.ppo.ci_high"] = ppo["return_mean"], ppo["ci_low"], ppo["ci_high"]
        m["return.ppo.real_env_steps"] = ppo["real_env_steps"]
        ret_rows.insert(2, {"policy": f"ppo ({ppo['real_env_steps']} steps)", "return_mean": ppo["return_mean"],
                            "ci_low": ppo["ci_low"], "ci_high": ppo["ci_high"]})
        diff = returns["mpc_seq"] - returns["mpc_joint"]
        m["return.seq_minus_joint.mean"] = float(diff.mean())
        m["return.mpc_seq_minus_random.mean"] = float((returns["mpc_seq"] - returns["random"]).mean())
        if len(diff) > 1:
            ci = t_interval(diff, 0.95)
            m["return.seq_minus_joint.ci_low"], m["return.seq_minus_joint.ci_high"] = ci["low"], ci["high"]
        write_json(ctx.path(METRICS), nest(m))

        # plots
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(6.4, 4))
        style = {"main": "-", "control": ":", "rich": "--"}
        color = {"joint": "tab:blue", "seq": "tab:red", "joint_chain": "tab:green"}
        for key in models:
            run, kind = key.split(".")
            ys = [r["mse"] for r in rows if r["setup"] == run and r["model"] == kind]
            label = {"main": f"N={pp.n_agents}", "control": f"N={pp.control_agents} (control)",
                     "rich": f"N={pp.n_agents}, {pp.rich_episodes} ep. (control)"}[run]
            ax.plot(range(1, H + 1), ys, style[run], color=color[kind], marker="o", ms=3, label=f"{kind}, {label}")
        ax.set(yscale="log", xlabel="imagined steps (open loop, logged actions)", ylabel="state MSE (held-out)",
               title=f"dima: rollout error, seed {ctx.seed}")
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT))
        write_csv(ctx.path(RETURN_DATA), ret_rows)
        fig, ax = new_figure(figsize=(5.5, 3.6))
        xs = np.arange(len(ret_rows))
        means = [r["return_mean"] for r in ret_rows]
        err = np.array([[r["return_mean"] - r["ci_low"] for r in ret_rows], [r["ci_high"] - r["return_mean"] for r in ret_rows]])
        ax.bar(xs, means, yerr=err, color=["grey", "tab:orange", "tab:purple", "black", "tab:blue", "tab:red"], capsize=4)
        ax.set_xticks(xs, [r["policy"].replace(" (", "\n(") for r in ret_rows], fontsize=7)
        ax.set(ylabel=f"real-env return ({p.episodes} episodes, 95% CI)", title=f"dima: planning in imagination, N={n}")
        save_png(fig, ctx.path(RETURN_PLOT))

        # a rendered episode of the planner through the DIMA model
        frames = render_episode(policies["mpc_seq"], n, pp.max_cycles, seeds[0])
        buf = io.BytesIO()
        frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
        write_bytes(ctx.path(RENDER_GIF), buf.getvalue())
        pick = np.linspace(0, len(frames) - 1, 5).round().astype(int)
        fig, axes = new_figure(1, 5, figsize=(10, 2.3))
        for a, i in zip(axes, pick):
            a.imshow(frames[i])
            a.set_axis_off()
            a.set_title(f"t = {i}", fontsize=9)
        fig.suptitle(f"simple_spread N={n}: CEM planner through the DIMA (seq) model, env seed {seeds[0]}", fontsize=9)
        save_png(fig, ctx.path(RENDER_PNG))
        print(f"  H={H} rollout MSE, main: joint {m['main.joint.mse_at_H']:.3g}, seq {m['main.seq.mse_at_H']:.3g} "
              f"(ratio {m['main.seq_over_joint.mse_at_H']:.3f}), joint_chain {m['main.joint_chain.mse_at_H']:.3g}; "
              f"controls: N={pp.control_agents} {m['control.seq_over_joint.mse_at_H']:.3f}, rich {m['rich.seq_over_joint.mse_at_H']:.3f}; "
              f"returns: " + ", ".join(f"{k} {m[f'return.{k}.mean']:.2f}" for k in POLICIES), flush=True)


if __name__ == "__main__":
    main()
