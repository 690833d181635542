"""nac_b prepare: the study's MDPs, generated from each verdict seed, with their exact optimal gains.

A verdict seed is one independent repetition of the whole experiment, its MDPs included. For
every seed of ``ctx.seeds``, three unichain MDPs with transient states feeding a periodic
recurrent class (stages/nac_b/mdp.py):

* ``regret``   -- the regret-vs-T sweep's MDP (period 2 in the default profile, as in the
  calibration: 6 states, 2 actions, two of them transient);
* ``batching`` -- the batching check's MDP: period 3-4 and rewards alternating by phase;
* ``control``  -- the same draw as ``batching`` with the phase rewards switched off (same
  kernel, same action-dependent rewards): what periodic rewards cost is the difference.

For each: J* by the average-reward LP solved by HiGHS (scipy.optimize.linprog, the library
answer), cross-checked by our relative value iteration on the aperiodicity transform; the gain
of the uniform policy and of RVI's greedy policy (exact, by the stationary law); the number of
recurrent classes and the period under every deterministic policy (up to a cap) and uniform.

Outputs: data/nac_b/mdps.json (per seed: the MDPs and their references), reports/nac_b/prepare.json
(per seed, ``per_seed``, beside the mean over the seeds: stages.common.seeds.per_seed_metrics).
The structure and LP/RVI figures are checks of the code (tests/nac_b/test_mdp.py), reported here
as context of the claims.
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import stage

from .params import NacBParams
from .paths import MDPS, PREPARE_METRICS

RNG_REGRET, RNG_BATCHING = 1, 2
NAMES = ("regret", "batching", "control")


def build_mdps(p, seed: int) -> dict:
    """{name: MDP} for the three MDPs of the study (see the module docstring)."""
    import numpy as np

    from .mdp import make_periodic_unichain

    def gen(mp, key, **override):
        kw = {**mp.model_dump(), **override}
        return make_periodic_unichain(np.random.default_rng([seed, key]), **kw)

    return {"regret": gen(p.regret_mdp, RNG_REGRET),
            "batching": gen(p.batching_mdp, RNG_BATCHING),
            "control": gen(p.batching_mdp, RNG_BATCHING, phase_amplitude=0.0)}


def references(m, p) -> dict:
    """Exact gains and structure checks of one MDP."""
    import numpy as np

    from .mdp import deterministic, optimal_gain_lp, policy_gain, relative_value_iteration, structure_report

    t0 = time.perf_counter()
    j_lp, occupancy = optimal_gain_lp(m.P, m.r)
    t_lp = time.perf_counter() - t0
    t0 = time.perf_counter()
    rvi = relative_value_iteration(m.P, m.r, tau=p.rvi_tau, tol=p.rvi_tol)
    t_rvi = time.perf_counter() - t0
    uniform = np.full(m.r.shape, 1.0 / m.n_actions)
    j_opt_policy = float(policy_gain(m.P, m.r, deterministic(rvi.policy, m.n_actions)))
    struct = structure_report(m, max_policies=p.max_policies_checked)
    bad_period = 0 if struct["periods"] == [m.period] else 1
    return {
        "n_states": m.n_states, "n_actions": m.n_actions, "n_transient": m.n_transient, "period": m.period,
        "P": m.P.tolist(), "r": m.r.tolist(), "phase": m.phase.tolist(),
        "J_star": j_lp, "J_star_rvi": rvi.gain, "rvi_bracket": list(rvi.gain_bracket),
        "rvi_iterations": rvi.iterations, "lp_s": t_lp, "rvi_s": t_rvi,
        "J_uniform": float(policy_gain(m.P, m.r, uniform)),
        "optimal_policy": rvi.policy.tolist(), "J_optimal_policy": j_opt_policy,
        "bias": rvi.bias.tolist(), "lp_occupancy": occupancy.tolist(),
        "structure": struct, "structure_violations": struct["not_unichain"] + bad_period,
    }


def seed_metrics(out: dict) -> dict:
    """The figures of one seed's three MDPs (``references`` of each)."""
    metrics = {
        name: {k: out[name][k] for k in ("n_states", "n_actions", "n_transient", "period", "J_star",
                                         "J_star_rvi", "J_uniform", "J_optimal_policy",
                                         "structure_violations", "rvi_iterations")}
        for name in NAMES}
    metrics["gain"] = {
        "lp_vs_rvi_max_abs_diff": max(abs(o["J_star"] - o["J_star_rvi"]) for o in out.values()),
        "optimal_policy_gap_max": max(abs(o["J_star"] - o["J_optimal_policy"]) for o in out.values()),
    }
    metrics["structure_violations"] = sum(o["structure_violations"] for o in out.values())
    metrics["policies_checked"] = sum(o["structure"]["policies_checked"] for o in out.values())
    return metrics


def main() -> None:
    with stage("nac_b", "prepare", NacBParams) as ctx:
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        p = ctx.params.prepare
        data, per_seed = {}, {}
        for seed in ctx.seeds:
            t0 = time.perf_counter()
            mdps = build_mdps(p, seed)
            out = {name: references(mdps[name], p) for name in NAMES}
            for name in NAMES:
                o = out[name]
                print(f"  seed {seed} {name}: S={o['n_states']} A={o['n_actions']} period={o['period']} "
                      f"J*={o['J_star']:.6f} (RVI {o['J_star_rvi']:.6f}) uniform={o['J_uniform']:.4f} "
                      f"structure violations={o['structure_violations']}", flush=True)
            print(f"  seed {seed} done in {time.perf_counter() - t0:.1f}s", flush=True)
            data[str(seed)] = out
            per_seed[seed] = seed_metrics(out)
        write_json(ctx.path(MDPS), {"seeds": list(ctx.seeds), "mdps": data})
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(per_seed))


if __name__ == "__main__":
    main()
