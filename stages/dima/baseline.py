"""dima's baseline agent: stable-baselines3 PPO, model-free, on the centralised gymnasium view
(claimbench/DimaSpread-v0: the physical state in, one MultiDiscrete action for all agents).

It learns from ``baseline.steps`` real-env steps (the world models learn from
``prepare.train_episodes`` x ``max_cycles``) and is evaluated, deterministic, on the same env seeds
as the planners of the evaluate stage. The train stage runs it; outputs: data/dima/ppo.zip (the SB3
model) and reports/dima/baseline.json (its real-env return).
"""
from __future__ import annotations

from .paths import BASELINE_METRICS, PPO_MODEL


def ppo_seed(p, pp, episodes: int, seed: int) -> tuple[bytes, dict, float]:
    """One seed's PPO: (the saved SB3 model, its real-env return figures, CPU seconds of learning)."""
    import io
    import time

    import gymnasium as gym
    import numpy as np
    from stable_baselines3 import PPO

    from stages.common.stats import t_interval

    from .env import ENV_ID
    from .plan import eval_seeds, evaluate_policy

    env = gym.make(ENV_ID, n_agents=pp.n_agents, max_cycles=pp.max_cycles)
    env.reset(seed=seed)
    model = PPO("MlpPolicy", env, n_steps=p.n_steps, batch_size=p.batch, n_epochs=p.epochs, learning_rate=p.lr,
                ent_coef=0.01, seed=seed, verbose=0, device="cpu",
                policy_kwargs={"net_arch": [p.hidden, p.hidden]})
    t0 = time.process_time()
    model.learn(total_timesteps=p.steps, progress_bar=False)
    cpu = time.process_time() - t0
    buf = io.BytesIO()
    model.save(buf)
    rets = evaluate_policy(lambda s: model.predict(s.astype(np.float32), deterministic=True)[0],
                           pp.n_agents, pp.max_cycles, eval_seeds(seed, episodes))
    ci = t_interval(rets, 0.95) if len(rets) > 1 else {"mean": float(rets[0]), "low": float(rets[0]), "high": float(rets[0])}
    return buf.getvalue(), {"return_mean": ci["mean"], "ci_low": ci["low"], "ci_high": ci["high"],
                            "real_env_steps": p.steps, "episodes": len(rets)}, cpu


def run_ppo(ctx) -> None:
    """Train PPO for every verdict seed, save them (data/dima/ppo.zip: one SB3 zip per seed,
    ``seed<k>.zip``) and write their real-env returns (reports/dima/baseline.json, per seed).
    Called by the train stage (one process: torch and SB3's optimiser imports are paid once)."""
    import io
    import zipfile

    from stages.common.io import write_bytes, write_json
    from stages.common.seeds import per_seed_metrics, run_seeds

    p, pp = ctx.params.baseline, ctx.params.prepare
    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w") as zf:
        def one(seed: int) -> dict:
            blob, fig, cpu = ppo_seed(p, pp, ctx.params.evaluate.episodes, seed)
            zf.writestr(f"seed{seed}.zip", blob)
            ctx.run.log_metrics({f"s{seed}.ppo.cpu_s": cpu, f"s{seed}.ppo.steps_per_cpu_s": p.steps / max(cpu, 1e-9)})
            print(f"  seed {seed}: SB3 PPO, {p.steps} real steps ({cpu:.1f} CPU s): return {fig['return_mean']:.2f} "
                  f"on {fig['episodes']} episodes", flush=True)
            return {"ppo": fig}

        per = run_seeds(ctx.seeds, one, what="dima PPO seed")
    write_bytes(ctx.path(PPO_MODEL), bundle.getvalue())
    write_json(ctx.path(BASELINE_METRICS), per_seed_metrics(per))
