"""dima evaluate: prediction errors on held-out trajectories, return of planning in imagination,
the plots and a rendered episode; every verdict seed (``ctx.seeds``) with its own models, held-out
episodes and evaluation env seeds, written per seed (``per_seed`` in metrics.json).

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

Outputs: reports/dima/metrics.json (what claims.yaml checks), rollout_mse.png/.csv (per seed; the
plot draws the mean over seeds), returns.png/.csv (the mean over seeds of each seed's mean return,
95% t interval over seeds), episode.gif, episode.png (the first seed's DIMA planner).
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


def evaluate_seed(arrays, models: dict, seed: int, p, pp, ppo: dict | None = None, progress: bool = False):
    """One verdict seed's figures: (flat metrics, rollout-error rows, returns per policy, policies).
    ``models`` are that seed's world models ({run.kind: WorldModel}); ``ppo`` its PPO figures."""
    import numpy as np
    from tqdm import tqdm

    from stages.common.stats import t_interval

    from .env import N_ACTIONS, heuristic_actions
    from .plan import ExactDynamics, cem_plan, eval_seeds, evaluate_policy
    from .paths import seed_key
    from .wm import reward_mse, rollout_mse

    H = p.horizon
    m: dict = {}
    rows = []
    for key, model in models.items():
        run, kind = key.split(".")
        pre = f"{seed_key(seed, run)}_test_"
        test = {k[len(pre):]: arrays[k] for k in arrays.files if k.startswith(pre)}
        curve = rollout_mse(model, test, H)
        m[f"{key}.mse_h1"], m[f"{key}.mse_at_H"] = float(curve[0]), float(curve[-1])
        m[f"{key}.mse_mean_1_to_H"] = float(curve.mean())
        m[f"{key}.reward_mse"] = reward_mse(model, test)
        rows += [{"seed": seed, "setup": run, "model": kind, "horizon": h + 1, "mse": float(v)} for h, v in enumerate(curve)]
    for run in ("main", "control", "rich"):
        for what in ("mse_h1", "mse_at_H", "mse_mean_1_to_H"):
            m[f"{run}.seq_over_joint.{what}"] = m[f"{run}.seq.{what}"] / m[f"{run}.joint.{what}"]
    for what in ("mse_h1", "mse_at_H"):
        m[f"main.seq_over_joint_chain.{what}"] = m[f"main.seq.{what}"] / m[f"main.joint_chain.{what}"]
        m[f"main.joint_chain_over_joint.{what}"] = m[f"main.joint_chain.{what}"] / m[f"main.joint.{what}"]

    # return of planning in imagination, in the real env (paired env seeds)
    rng = np.random.default_rng([seed, 77])
    seeds = eval_seeds(seed, p.episodes)
    n, pl = pp.n_agents, p.plan

    def planner(model):
        return lambda s: cem_plan(model, s, n, pl.horizon, pl.candidates, pl.elites, pl.iterations, rng)

    policies = {"random": lambda s: rng.integers(0, N_ACTIONS, n), "heuristic": lambda s: heuristic_actions(s, n),
                "mpc_true": planner(ExactDynamics(n)), "mpc_joint": planner(models["main.joint"]),
                "mpc_seq": planner(models["main.seq"])}
    returns = {}
    for name in tqdm(POLICIES, desc=f"dima: real-env returns, seed {seed}", mininterval=2, disable=not progress):
        returns[name] = evaluate_policy(policies[name], n, pp.max_cycles, seeds)
    for name, r in returns.items():
        ci = t_interval(r, 0.95) if len(r) > 1 else {"mean": float(r[0]), "low": float(r[0]), "high": float(r[0])}
        m[f"return.{name}.mean"], m[f"return.{name}.ci_low"], m[f"return.{name}.ci_high"] = ci["mean"], ci["low"], ci["high"]
    if ppo is not None:
        m["return.ppo.mean"], m["return.ppo.ci_low"], m["return.ppo.ci_high"] = ppo["return_mean"], ppo["ci_low"], ppo["ci_high"]
    diff = returns["mpc_seq"] - returns["mpc_joint"]
    m["return.seq_minus_joint.mean"] = float(diff.mean())
    m["return.mpc_seq_minus_random.mean"] = float((returns["mpc_seq"] - returns["random"]).mean())
    if len(diff) > 1:
        ci = t_interval(diff, 0.95)
        m["return.seq_minus_joint.ci_low"], m["return.seq_minus_joint.ci_high"] = ci["low"], ci["high"]
    return m, rows, returns, policies


def main() -> None:
    with stage("dima", "evaluate", PARAMS) as ctx:
        import io
        import json

        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics, run_seeds
        from stages.common.stats import t_interval

        from .plan import eval_seeds
        from .pyfunc_io import load_models
        from .wm import nest

        limit_threads()
        arrays = np.load(ctx.path(DATA))
        p, pp = ctx.params.evaluate, ctx.params.prepare
        H, n = p.horizon, pp.n_agents
        ppo_all = json.loads(ctx.path(BASELINE_METRICS).read_text())
        rows, first = [], {}

        def one(seed: int) -> dict:
            models = load_models(ctx.path(WEIGHTS), ctx.path(CONFIG), seed=seed)
            m, r, _, policies = evaluate_seed(arrays, models, seed, p, pp, ppo_all["per_seed"][str(seed)]["ppo"], progress=True)
            rows.extend(r)
            if not first:
                first.update(seed=seed, policies=policies, keys=list(models))
            print(f"  seed {seed}: H={H} rollout MSE, main: joint {m['main.joint.mse_at_H']:.3g}, seq {m['main.seq.mse_at_H']:.3g}, "
                  f"joint_chain {m['main.joint_chain.mse_at_H']:.3g}; seq/joint {m['main.seq_over_joint.mse_at_H']:.3f}, "
                  f"joint_chain/joint {m['main.joint_chain_over_joint.mse_at_H']:.3f}; returns: "
                  + ", ".join(f"{k} {m[f'return.{k}.mean']:.2f}" for k in POLICIES), flush=True)
            return nest(m)

        per = run_seeds(ctx.seeds, one, what="dima evaluate seed")
        m = per_seed_metrics(per, horizon=H, n_agents=n, control_agents=pp.control_agents,
                             ppo_real_env_steps=ppo_all["per_seed"][str(ctx.seeds[0])]["ppo"]["real_env_steps"])
        write_json(ctx.path(METRICS), m)

        # plots: the mean over the verdict seeds
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(6.4, 4))
        style = {"main": "-", "control": ":", "rich": "--"}
        color = {"joint": "tab:blue", "seq": "tab:red", "joint_chain": "tab:green"}
        for key in first["keys"]:
            run, kind = key.split(".")
            ys = [np.mean([r["mse"] for r in rows if r["setup"] == run and r["model"] == kind and r["horizon"] == h])
                  for h in range(1, H + 1)]
            label = {"main": f"N={n}", "control": f"N={pp.control_agents} (control)",
                     "rich": f"N={n}, {pp.rich_episodes} ep. (control)"}[run]
            ax.plot(range(1, H + 1), ys, style[run], color=color[kind], marker="o", ms=3, label=f"{kind}, {label}")
        ax.set(yscale="log", xlabel="imagined steps (open loop, logged actions)", ylabel="state MSE (held-out)",
               title=f"dima: rollout error, mean over seeds {ctx.seeds}")
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT))
        ret_rows = []
        for name in POLICIES[:2] + ("ppo",) + POLICIES[2:]:
            vals = np.array([per[s]["return"][name]["mean"] for s in ctx.seeds])
            ci = t_interval(vals, 0.95) if len(vals) > 1 else {"mean": float(vals[0]), "low": float(vals[0]), "high": float(vals[0])}
            label = f"ppo ({m['ppo_real_env_steps']} steps)" if name == "ppo" else name
            ret_rows.append({"policy": label, "return_mean": ci["mean"], "ci_low": ci["low"], "ci_high": ci["high"]})
        write_csv(ctx.path(RETURN_DATA), ret_rows)
        fig, ax = new_figure(figsize=(5.5, 3.6))
        xs = np.arange(len(ret_rows))
        means = [r["return_mean"] for r in ret_rows]
        err = np.array([[r["return_mean"] - r["ci_low"] for r in ret_rows], [r["ci_high"] - r["return_mean"] for r in ret_rows]])
        ax.bar(xs, means, yerr=err, color=["grey", "tab:orange", "tab:purple", "black", "tab:blue", "tab:red"], capsize=4)
        ax.set_xticks(xs, [r["policy"].replace(" (", "\n(") for r in ret_rows], fontsize=7)
        ax.set(ylabel=f"real-env return (mean of {len(ctx.seeds)} seeds' means, 95% CI)",
               title=f"dima: planning in imagination, N={n}")
        save_png(fig, ctx.path(RETURN_PLOT))

        # a rendered episode of the planner through the first seed's DIMA model
        env_seed = eval_seeds(first["seed"], p.episodes)[0]
        frames = render_episode(first["policies"]["mpc_seq"], n, pp.max_cycles, env_seed)
        buf = io.BytesIO()
        frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
        write_bytes(ctx.path(RENDER_GIF), buf.getvalue())
        pick = np.linspace(0, len(frames) - 1, 5).round().astype(int)
        fig, axes = new_figure(1, 5, figsize=(10, 2.3))
        for a, i in zip(axes, pick):
            a.imshow(frames[i])
            a.set_axis_off()
            a.set_title(f"t = {i}", fontsize=9)
        fig.suptitle(f"simple_spread N={n}: CEM planner through the DIMA (seq) model, env seed {env_seed}", fontsize=9)
        save_png(fig, ctx.path(RENDER_PNG))
        print(f"  mean over seeds {ctx.seeds}: seq - joint at H {m['main']['seq']['mse_at_H'] - m['main']['joint']['mse_at_H']:+.4f}, "
              f"joint_chain - joint {m['main']['joint_chain']['mse_at_H'] - m['main']['joint']['mse_at_H']:+.4f}", flush=True)


if __name__ == "__main__":
    main()
