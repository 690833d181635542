"""nac_b train: NAC-B's regret vs T, its control arms, the non-learning baselines, and the
batching sweep, for every verdict seed.

A verdict seed is one independent repetition of the whole experiment: its own MDPs (prepare) and
its own random numbers. All seeds run in one simulation per sweep (a seed dimension: every run
plays its own seed's MDP from a stack, and each seed's runs draw their uniforms from that seed's
generators, stages/nac_b/nacb.py), so a seed's figures are the same whatever seeds share the
simulation (tests/nac_b/test_seeds.py).

1. Regret sweep (each seed's ``regret`` MDP): for every T of ``T_grid``, ``runs`` independent runs
   (one trajectory of T steps each, from transient state 0) of each learning arm, and
   ``baseline_runs`` of each non-learning one, all in one simulation. Regret(T) = T J* - sum r_t.
   The arms (``REGRET_ARMS``):
   * ``nacb``: NAC-B, batch ``batch_size``, steps alpha, beta, gamma;
   * ``no_batching``: the ablation, NAC-B without batching: batch 1, the same actor step alpha,
     the same per-sample critic and NPG steps (beta / B, gamma / B: a batch-B step moves by the
     mean of B transitions' gradients), the same epochs and samples;
   * ``plain_ac``: a plain actor-critic: the same critic at batch 1 (per-sample step beta / B)
     and, instead of the natural gradient, the policy-gradient estimate mean(A psi) with actor
     step ``plain_actor_step`` (chosen on calibration seeds, benchmarks/nac_b/calibration.py);
   * ``uniform`` (no learning) and ``optimal`` (RVI's greedy policy, gain J* by the HiGHS LP).
   The largest-T NAC-B runs also record their cumulative reward and their policy at log-spaced
   times (the policy's exact gain gives J* - J(pi_t)).
2. Batching sweep (each seed's ``batching`` MDP: period 3-4, rewards alternating by phase;
   ``control``: the same MDP without the phase rewards), at one sample budget T:
   a. tuning: every (batch size, shared step alpha = beta = gamma) on ``tune_runs`` runs; each
      batch size's tuned step is the one with the lowest mean regret on the batching MDP; the
      tuned batch B* is the batch size > 1 with the lowest tuned regret, and its step is the
      fixed step;
   b. evaluation on fresh runs (``eval_runs``, other random numbers): every batch size at the
      fixed step, and every batch size at its own tuned step, on both MDPs.

Outputs: data/nac_b/results.json (per seed, per-run regrets; evaluate reads it),
reports/nac_b/train.json.
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import stage

from .params import NacBParams
from .paths import MDPS, RESULTS, TRAIN_METRICS

RNG_REGRET, RNG_TUNE, RNG_EVAL = 11, 12, 13
ORACLE_LOGIT = 30.0          # theta of the optimal action: the oracle plays it w.p. 1 - e^-30
REGRET_ARMS = ("nacb", "no_batching", "plain_ac", "uniform", "optimal")
LEARNING_ARMS = ("nacb", "no_batching", "plain_ac")


def load_mdps(path, seeds) -> dict:
    """{seed: {name: (P, r, info)}} from mdps.json, for ``seeds`` (each must be there)."""
    import json

    import numpy as np

    from stages.common.runtime.stage import fail

    data = json.loads(path.read_text())["mdps"]
    missing = [s for s in seeds if str(s) not in data]
    if missing:
        fail(f"{path} has no MDPs for verdict seeds {missing} (it holds {sorted(data, key=int)}); "
             "run `dvc repro stages/nac_b/dvc.yaml:nac_b-prepare`")
    return {s: {k: (np.array(v["P"]), np.array(v["r"]), v) for k, v in data[str(s)].items()} for s in seeds}


def log_times(T_max: int, n: int):
    """About n distinct integer times, log-spaced over [1, T_max], T_max included."""
    import numpy as np

    return sorted({int(round(x)) for x in np.geomspace(1, T_max, n)})


def regret_arms(p) -> dict:
    """{arm: (runs per T, batch, alpha, beta, gamma, natural)} of the regret sweep (``p``: RegretSweep)."""
    B = p.batch_size
    return {"nacb": (p.runs, B, p.actor_step, p.critic_step, p.npg_step, True),
            "no_batching": (p.runs, 1, p.actor_step, p.critic_step / B, p.npg_step / B, True),
            "plain_ac": (p.runs, 1, p.plain_actor_step, p.critic_step / B, 0.0, False),
            "uniform": (p.baseline_runs, 1, 0.0, 0.0, 0.0, True),
            "optimal": (p.baseline_runs, 1, 0.0, 0.0, 0.0, True)}


def regret_sweep(mdps: dict, seeds, p, tp, arms=REGRET_ARMS, progress: str | None = "regret sweep",
                 extra: dict | None = None) -> dict:
    """Every seed's regret sweep in one simulation: {seed: results} (see the module docstring).
    ``mdps``: {seed: {name: (P, r, info)}}; ``p``: RegretSweep; ``tp``: TrainParams; ``extra``:
    more arms {name: (runs per T, batch, alpha, beta, gamma, natural)} (calibration), run after
    ``arms``."""
    import numpy as np

    from .mdp import policy_gain
    from .nacb import concat_runsets, make_runset, run_nacb

    Ts = np.array(p.T_grid)
    spec = {**regret_arms(p), **(extra or {})}
    arms = [*arms, *(extra or {})]
    parts, mdp_idx, theta0, groups, layout = [], [], [], [], []
    for k, seed in enumerate(seeds):
        P, r, info = mdps[seed]["regret"]
        S, A = r.shape
        opt_theta = ORACLE_LOGIT * np.eye(A)[np.array(info["optimal_policy"])]
        n_seed = 0
        for arm in arms:
            n, B, al, be, ga, nat = spec[arm]
            rs = make_runset(np.repeat(Ts, n), B, al, be, ga, tp.epochs_scale, tp.epochs_exponent, natural=nat)
            parts.append(rs)
            theta0.append(np.broadcast_to(opt_theta if arm == "optimal" else np.zeros((S, A)), (rs.R, S, A)))
            layout.append((seed, arm, n))
            n_seed += rs.R
        mdp_idx.append(np.full(n_seed, k))
        groups.append((np.random.default_rng([seed, RNG_REGRET]), n_seed))
    runs = concat_runsets(parts)
    P = np.stack([mdps[s]["regret"][0] for s in seeds])
    r = np.stack([mdps[s]["regret"][1] for s in seeds])
    ck = log_times(int(Ts[-1]), p.checkpoints)
    out = run_nacb(P, r, runs, groups, np.zeros(runs.R, dtype=np.int64), theta0=np.concatenate(theta0),
                   checkpoints=ck, clip=tp.clip, progress=progress, mdp=np.concatenate(mdp_idx))
    res = {}
    start = 0
    for seed, arm, n in layout:
        P_s, r_s, info = mdps[seed]["regret"]
        J = info["J_star"]
        if seed not in res:
            res[seed] = {"T_grid": Ts.tolist(), "J_star": J, "J_uniform": info["J_uniform"], "checkpoints": ck}
        sl = slice(start, start + len(Ts) * n)
        start += len(Ts) * n
        regret = runs.T[sl] * J - out["reward"][sl]
        a = {"regret": regret.reshape(len(Ts), n).tolist(),
             "diverged": out["diverged"][sl].reshape(len(Ts), n).sum(axis=1).tolist()}
        if spec[arm][2] > 0:                                                 # a learning arm
            a["epochs"] = out["epochs"][sl].reshape(len(Ts), n)[:, 0].tolist()
            a["inner_steps"] = out["inner_steps"][sl].reshape(len(Ts), n)[:, 0].tolist()
        if arm == "nacb":
            last = np.arange(sl.start, sl.stop)[runs.T[sl] == Ts[-1]]
            a["curve_regret"] = (np.array(ck)[:, None] * J - out["curve"][:, last]).T.tolist()
            gains = policy_gain(P_s, r_s, out["policies"][:, last])            # (n_ck, runs)
            a["curve_gain_gap"] = (J - gains).T.tolist()
        res[seed][arm] = a
    return res


def batching_runs(mdps: dict, configs: dict, names, T: int, n: int, tp, stream: int, desc):
    """Regrets of each seed's ``configs[seed]`` [(B, step)] on each MDP of ``names``, ``n`` runs
    each, all seeds in one simulation (each seed's draws from ``rng([seed, stream])``). Returns
    {seed: {name: (regret, diverged)}} with arrays of shape (len(configs[seed]), n)."""
    import numpy as np

    from .nacb import concat_runsets, make_runset, run_nacb

    seeds = list(configs)
    P = np.stack([mdps[s][k][0] for s in seeds for k in names])
    r = np.stack([mdps[s][k][1] for s in seeds for k in names])
    parts, mdp_idx, groups = [], [], []
    for i, seed in enumerate(seeds):
        cfg = configs[seed]
        Bs = np.tile(np.repeat([c[0] for c in cfg], n), len(names))
        st = np.tile(np.repeat([c[1] for c in cfg], n), len(names))
        parts.append(make_runset(T, Bs, st, st, st, tp.epochs_scale, tp.epochs_exponent))
        mdp_idx.append(i * len(names) + np.repeat(np.arange(len(names)), len(cfg) * n))
        groups.append((np.random.default_rng([seed, stream]), len(Bs)))
    runs = concat_runsets(parts)
    out = run_nacb(P, r, runs, groups, np.zeros(runs.R, dtype=np.int64), clip=tp.clip, progress=desc,
                   mdp=np.concatenate(mdp_idx))
    res, start = {}, 0
    for seed in seeds:
        nc = len(configs[seed])
        res[seed] = {}
        for k in names:
            sl = slice(start, start + nc * n)
            start += nc * n
            reg = T * mdps[seed][k][2]["J_star"] - out["reward"][sl]
            res[seed][k] = (reg.reshape(nc, n), out["diverged"][sl].reshape(nc, n))
    return res


def batching_sweep(mdps: dict, seeds, p, tp, progress: bool = True) -> dict:
    """Every seed's batching sweep (tuning, then evaluation on fresh runs): {seed: results}."""

    names = ["batching", "control"]
    grid = [(b, s) for b in p.batch_sizes for s in p.steps]
    tune = batching_runs(mdps, {s: grid for s in seeds}, names, p.T, p.tune_runs, tp, RNG_TUNE,
                         "batching: tuning" if progress else None)
    picked, configs = {}, {}
    for seed in seeds:
        mean = tune[seed]["batching"][0].mean(axis=1).reshape(len(p.batch_sizes), len(p.steps))
        tuned_idx = mean.argmin(axis=1)
        tuned_step = {b: p.steps[i] for b, i in zip(p.batch_sizes, tuned_idx)}
        tuned_regret = {b: float(mean[k, tuned_idx[k]]) for k, b in enumerate(p.batch_sizes)}
        best_batch = min((b for b in p.batch_sizes if b > 1), key=lambda b: tuned_regret[b])
        fixed_step = tuned_step[best_batch]
        cfg = [(b, fixed_step) for b in p.batch_sizes]
        cfg += [(b, tuned_step[b]) for b in p.batch_sizes if (b, tuned_step[b]) not in cfg]
        picked[seed] = (tuned_step, tuned_regret, best_batch, fixed_step)
        configs[seed] = cfg
    ev = batching_runs(mdps, configs, names, p.T, p.eval_runs, tp, RNG_EVAL,
                       "batching: evaluation" if progress else None)
    res = {}
    for seed in seeds:
        tuned_step, tuned_regret, best_batch, fixed_step = picked[seed]
        res[seed] = {
            "T": p.T, "batch_sizes": list(p.batch_sizes), "steps": list(p.steps),
            "J_star": {k: mdps[seed][k][2]["J_star"] for k in names},
            "J_uniform": {k: mdps[seed][k][2]["J_uniform"] for k in names},
            "period": mdps[seed]["batching"][2]["period"],
            "tuned_step": {str(b): s for b, s in tuned_step.items()},
            "tuned_regret_tuning_runs": {str(b): v for b, v in tuned_regret.items()},
            "best_batch": best_batch, "fixed_step": fixed_step,
            "tune": {k: {"regret": tune[seed][k][0].reshape(len(p.batch_sizes), len(p.steps), -1).tolist(),
                         "diverged": tune[seed][k][1].reshape(len(p.batch_sizes), len(p.steps), -1)
                         .sum(axis=2).tolist()} for k in names},
            "eval": {"configs": [list(c) for c in configs[seed]],
                     **{k: {"regret": ev[seed][k][0].tolist(), "diverged": ev[seed][k][1].sum(axis=1).tolist()}
                        for k in names}}}
    return res


def main() -> None:
    with stage("nac_b", "train", NacBParams) as ctx:
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        seeds = list(ctx.seeds)
        mdps = load_mdps(ctx.path(MDPS), seeds)
        tp = ctx.params.train
        t0 = time.perf_counter()
        regret = regret_sweep(mdps, seeds, tp.regret, tp)
        t_regret = time.perf_counter() - t0
        print(f"  regret sweep, seeds {seeds}: {t_regret:.1f}s", flush=True)
        t0 = time.perf_counter()
        batching = batching_sweep(mdps, seeds, tp.batching, tp)
        t_batching = time.perf_counter() - t0
        write_json(ctx.path(RESULTS), {"seeds": seeds, "per_seed": {
            str(s): {"regret": regret[s], "batching": batching[s]} for s in seeds}})
        # timings go to stdout and to MLflow (stage.compute_s), not to the metrics: the metrics
        # file must be identical for identical params
        n_arm = {a: regret_arms(tp.regret)[a][0] for a in REGRET_ARMS}
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(
            {s: {"diverged": {a: int(sum(regret[s][a]["diverged"])) for a in LEARNING_ARMS},
                 "batching_best_batch": batching[s]["best_batch"],
                 "batching_fixed_step": batching[s]["fixed_step"]} for s in seeds},
            runs_per_seed={"regret_sweep": len(tp.regret.T_grid) * sum(n_arm.values()),
                           "batching_tune": 2 * len(tp.batching.batch_sizes) * len(tp.batching.steps)
                           * tp.batching.tune_runs,
                           "batching_eval_max": 2 * 2 * len(tp.batching.batch_sizes) * tp.batching.eval_runs}))
        print(f"  batching sweep {t_batching:.1f}s; per seed B* = "
              f"{ {s: batching[s]['best_batch'] for s in seeds} }, fixed step = "
              f"{ {s: batching[s]['fixed_step'] for s in seeds} }", flush=True)


if __name__ == "__main__":
    main()
