"""nac_b train: NAC-B's regret vs T, the non-learning baselines, and the batching sweep.

1. Regret sweep (the ``regret`` MDP): for every T of ``T_grid``, ``seeds`` independent NAC-B
   runs (one trajectory of T steps each, from transient state 0), plus ``baseline_seeds`` runs
   of the uniform policy (no learning) and of the exact optimal policy (RVI's greedy policy,
   gain J* by the HiGHS LP) -- all vectorised in one simulation. Regret(T) = T J* - sum r_t.
   The largest-T runs also record their cumulative reward and their policy at log-spaced times
   (the policy's exact gain gives J* - J(pi_t)).
2. Batching sweep (``batching`` MDP: period 3-4, rewards alternating by phase; ``control``:
   the same MDP without the phase rewards), at one sample budget T:
   a. tuning: every (batch size, shared step alpha = beta = gamma) on ``tune_seeds`` runs; each
      batch size's tuned step is the one with the lowest mean regret on the batching MDP; the
      tuned batch B* is the batch size > 1 with the lowest tuned regret, and its step is the
      fixed step of the check;
   b. evaluation on fresh runs (``eval_seeds``, other random numbers): every batch size at the
      fixed step, and every batch size at its own tuned step, on both MDPs.

Outputs: data/nac_b/results.json (per-run regrets; evaluate reads it), reports/nac_b/train.json.
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import stage

from .params import NacBParams
from .paths import MDPS, RESULTS, TRAIN_METRICS

RNG_REGRET, RNG_TUNE, RNG_EVAL = 11, 12, 13
ORACLE_LOGIT = 30.0          # theta of the optimal action: the oracle plays it w.p. 1 - e^-30


def load_mdps(path):
    """{name: (P, r, info)} from mdps.json."""
    import json

    import numpy as np

    data = json.loads(path.read_text())["mdps"]
    return {k: (np.array(v["P"]), np.array(v["r"]), v) for k, v in data.items()}


def log_times(T_max: int, n: int):
    """About n distinct integer times, log-spaced over [1, T_max], T_max included."""
    import numpy as np

    return sorted({int(round(x)) for x in np.geomspace(1, T_max, n)})


def regret_sweep(P, r, info, p, tp, seed: int) -> dict:
    import numpy as np

    from .mdp import policy_gain
    from .nacb import make_runset, run_nacb

    S, A = r.shape
    Ts = np.array(p.T_grid)
    n, nb = p.seeds, p.baseline_seeds
    methods = [("nacb", n), ("uniform", nb), ("optimal", nb)]
    T, B, al, be, ga, th0 = [], [], [], [], [], []
    opt_theta = ORACLE_LOGIT * np.eye(A)[np.array(info["optimal_policy"])]
    for name, k in methods:
        T.append(np.repeat(Ts, k))
        learn = name == "nacb"
        B.append(np.full(len(Ts) * k, p.batch_size))
        al.append(np.full(len(Ts) * k, p.actor_step if learn else 0.0))
        be.append(np.full(len(Ts) * k, p.critic_step if learn else 0.0))
        ga.append(np.full(len(Ts) * k, p.npg_step if learn else 0.0))
        th0.append(np.broadcast_to(opt_theta if name == "optimal" else np.zeros((S, A)), (len(Ts) * k, S, A)))
    runs = make_runset(np.concatenate(T), np.concatenate(B), np.concatenate(al), np.concatenate(be),
                       np.concatenate(ga), tp.epochs_scale, tp.epochs_exponent)
    ck = log_times(int(Ts[-1]), p.checkpoints)
    out = run_nacb(P, r, runs, np.random.default_rng([seed, RNG_REGRET]), np.zeros(runs.R, dtype=np.int64),
                   theta0=np.concatenate(th0), checkpoints=ck, clip=tp.clip, progress="regret sweep")
    J = info["J_star"]
    regret = runs.T * J - out["reward"]
    res = {"T_grid": Ts.tolist(), "J_star": J, "J_uniform": info["J_uniform"], "checkpoints": ck}
    start = 0
    for name, k in methods:
        sl = slice(start, start + len(Ts) * k)
        start += len(Ts) * k
        res[name] = {"regret": regret[sl].reshape(len(Ts), k).tolist(),
                     "diverged": out["diverged"][sl].reshape(len(Ts), k).sum(axis=1).tolist()}
        last = np.arange(sl.start, sl.stop)[runs.T[sl] == Ts[-1]]
        curve = np.array(ck)[:, None] * J - out["curve"][:, last]            # regret after t steps
        res[name]["curve_regret"] = curve.T.tolist()
        if name == "nacb":
            res[name]["epochs"] = out["epochs"][sl].reshape(len(Ts), k)[:, 0].tolist()
            res[name]["inner_steps"] = out["inner_steps"][sl].reshape(len(Ts), k)[:, 0].tolist()
            gains = policy_gain(P, r, out["policies"][:, last])               # (n_ck, runs)
            res[name]["curve_gain_gap"] = (J - gains).T.tolist()
    return res


def batching_runs(mdps, configs, mdp_names, T, seeds, tp, rng, desc):
    """Mean regrets of ``configs`` [(B, step)] on each MDP of ``mdp_names``, ``seeds`` runs each,
    in one simulation on the disjoint union of the MDPs. Returns {name: (regret, diverged)} with
    arrays of shape (len(configs), seeds)."""
    import numpy as np

    from .mdp import MDP, disjoint_union
    from .nacb import make_runset, run_nacb

    blocks = [MDP(P=mdps[k][0], r=mdps[k][1], phase=np.array(mdps[k][2]["phase"]), period=mdps[k][2]["period"])
              for k in mdp_names]
    P, r, offsets = disjoint_union(blocks)
    nc = len(configs)
    Bs = np.tile(np.repeat([c[0] for c in configs], seeds), len(mdp_names))
    st = np.tile(np.repeat([c[1] for c in configs], seeds), len(mdp_names))
    s0 = np.repeat(offsets[:-1], nc * seeds)
    runs = make_runset(T, Bs, st, st, st, tp.epochs_scale, tp.epochs_exponent)
    out = run_nacb(P, r, runs, rng, s0, clip=tp.clip, progress=desc)
    res = {}
    for i, k in enumerate(mdp_names):
        sl = slice(i * nc * seeds, (i + 1) * nc * seeds)
        reg = T * mdps[k][2]["J_star"] - out["reward"][sl]
        res[k] = (reg.reshape(nc, seeds), out["diverged"][sl].reshape(nc, seeds))
    return res


def batching_sweep(mdps, p, tp, seed: int) -> dict:
    import numpy as np

    names = ["batching", "control"]
    grid = [(b, s) for b in p.batch_sizes for s in p.steps]
    tune = batching_runs(mdps, grid, names, p.T, p.tune_seeds, tp, np.random.default_rng([seed, RNG_TUNE]),
                         "batching: tuning")
    mean = tune["batching"][0].mean(axis=1).reshape(len(p.batch_sizes), len(p.steps))
    tuned_idx = mean.argmin(axis=1)
    tuned_step = {b: p.steps[i] for b, i in zip(p.batch_sizes, tuned_idx)}
    tuned_regret = {b: float(mean[k, tuned_idx[k]]) for k, b in enumerate(p.batch_sizes)}
    best_batch = min((b for b in p.batch_sizes if b > 1), key=lambda b: tuned_regret[b])
    fixed_step = tuned_step[best_batch]
    configs = [(b, fixed_step) for b in p.batch_sizes]
    configs += [(b, tuned_step[b]) for b in p.batch_sizes if (b, tuned_step[b]) not in configs]
    ev = batching_runs(mdps, configs, names, p.T, p.eval_seeds, tp, np.random.default_rng([seed, RNG_EVAL]),
                       "batching: evaluation")
    res = {"T": p.T, "batch_sizes": list(p.batch_sizes), "steps": list(p.steps),
           "J_star": {k: mdps[k][2]["J_star"] for k in names},
           "J_uniform": {k: mdps[k][2]["J_uniform"] for k in names},
           "tuned_step": {str(b): s for b, s in tuned_step.items()},
           "tuned_regret_tuning_runs": {str(b): v for b, v in tuned_regret.items()},
           "best_batch": best_batch, "fixed_step": fixed_step,
           "tune": {k: {"regret": tune[k][0].reshape(len(p.batch_sizes), len(p.steps), -1).tolist(),
                        "diverged": tune[k][1].reshape(len(p.batch_sizes), len(p.steps), -1).sum(axis=2).tolist()}
                    for k in names},
           "eval": {"configs": [list(c) for c in configs],
                    **{k: {"regret": ev[k][0].tolist(), "diverged": ev[k][1].sum(axis=1).tolist()}
                       for k in names}}}
    return res


def main() -> None:
    with stage("nac_b", "train", NacBParams) as ctx:
        from stages.common.io import write_json

        mdps = load_mdps(ctx.path(MDPS))
        tp = ctx.params.train
        t0 = time.perf_counter()
        P, r, info = mdps["regret"]
        regret = regret_sweep(P, r, info, tp.regret, tp, ctx.seed)
        t_regret = time.perf_counter() - t0
        t0 = time.perf_counter()
        batching = batching_sweep(mdps, tp.batching, tp, ctx.seed)
        t_batching = time.perf_counter() - t0
        write_json(ctx.path(RESULTS), {"seed": ctx.seed, "regret": regret, "batching": batching})
        # timings go to stdout and to MLflow (stage.compute_s), not to the metrics: the metrics
        # file must be identical for identical params
        write_json(ctx.path(TRAIN_METRICS), {
            "runs": {"regret_sweep": len(tp.regret.T_grid) * (tp.regret.seeds + 2 * tp.regret.baseline_seeds),
                     "batching_tune": 2 * len(tp.batching.batch_sizes) * len(tp.batching.steps) * tp.batching.tune_seeds,
                     "batching_eval": 2 * len(batching["eval"]["configs"]) * tp.batching.eval_seeds},
            "nacb_diverged": int(sum(regret["nacb"]["diverged"])),
            "batching_best_batch": batching["best_batch"], "batching_fixed_step": batching["fixed_step"],
        })
        print(f"  regret sweep {t_regret:.1f}s, batching sweep {t_batching:.1f}s; B* = {batching['best_batch']}, "
              f"fixed step = {batching['fixed_step']}", flush=True)


if __name__ == "__main__":
    main()
