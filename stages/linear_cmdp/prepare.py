"""linear_cmdp prepare: draw binding CMDP instances with the official generators, for every
verdict seed; exact optima.

A verdict seed is one independent repetition of the whole experiment: for every seed of the
profile (``ctx.seeds``) and every setup of params (tabular-as-linear and linear d=2 in the
default profile) instances are drawn with ``np.random.default_rng([seed, crc32(setup), draw])``
until ``instances`` of them are *binding*: the unconstrained optimum max_pi V_r exceeds the
constrained optimum max {V_r : V_u >= b} by more than ``binding_tol`` (both by the HiGHS
occupancy-measure LP), i.e. no reward-optimal policy is feasible and an algorithm that ignores
the constraint would violate it. Rejected draws are counted. For every kept instance: the
threshold b and safe policy (official ``set_cmdp_info``), V* and the utility multiplier from
the LP, and a cross-check: the LP's policy evaluated exactly by backward induction must give
V* and satisfy the constraint (context; tests/linear_cmdp/test_cmdp.py tests it). A seed's
instances depend on that seed alone (seed 0's are the first ones it drew when the study ran one
seed).

Writes data/linear_cmdp/instances.json (every seed's instances, each with its ``seed`` and its
``index`` within the seed) and reports/linear_cmdp/prepare.json (per seed: what was kept and
rejected, the optimum's cross-check; ``per_seed`` beside the mean over seeds).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .instances import setup_seed
from .params import LinearCmdpParams
from .paths import INSTANCES, PREPARE_METRICS


def draw_instance(kind: str, rng, sp):
    from .cmdp import linear_cmdp, tabular_cmdp

    if kind == "tabular":
        return tabular_cmdp(rng, sp.S, sp.A, sp.H)
    return linear_cmdp(rng, sp.S, sp.A, sp.H, sp.d)


def binding_instances(name: str, sp, seed: int, tol: float) -> tuple[list[dict], int]:
    """(kept instances as dicts of arrays and figures, number of rejected draws)."""
    import numpy as np

    from .cmdp import binding_gap, policy_values, with_threshold

    kept, rejected = [], 0
    for draw in range(sp.max_draws):
        rng = np.random.default_rng([seed, setup_seed(name), draw])
        m = with_threshold(draw_instance(sp.kind, rng, sp), sp.threshold_scale)
        v_free, v_star, sol = binding_gap(m)
        if v_free - v_star <= tol:
            rejected += 1
            continue
        RU = np.stack([m.r, m.u])
        lp_vals = policy_values(m.P, sol.policy, RU, m.mu)
        uni = policy_values(m.P, np.full(m.r.shape, 1.0 / m.A), RU, m.mu)
        safe_vals = policy_values(m.P, m.safe_policy, RU, m.mu)
        kept.append({
            "setup": name, "kind": sp.kind, "draw": draw,
            "P": m.P, "r": m.r, "u": m.u, "mu": m.mu, "phi": m.phi,
            "threshold": m.threshold, "safe_policy": m.safe_policy,
            "v_free": v_free, "v_star": v_star, "multiplier": sol.multiplier,
            "lp_policy_values": lp_vals, "uniform_values": uni, "safe_values": safe_vals,
        })
        if len(kept) == sp.instances:
            return kept, rejected
    fail(f"setup {name!r}, seed {seed}: only {len(kept)} binding instances in {sp.max_draws} draws "
         f"(need {sp.instances}); raise linear_cmdp.<profile>.prepare.setups.{name}.max_draws "
         f"or threshold_scale")
    raise AssertionError  # unreachable


def seed_instances(pp, seed: int, log=print) -> tuple[list[dict], dict]:
    """One verdict seed's instances (every setup; each record with its ``seed`` and ``index``
    within the seed) and that seed's summary figures."""
    import numpy as np

    instances, summary = [], {}
    worst_value, worst_util = 0.0, float("inf")
    for name, sp in pp.setups.items():
        kept, rejected = binding_instances(name, sp, seed, pp.binding_tol)
        for k in kept:
            instances.append({**k, "seed": seed, "index": len(instances)})
        gaps = [k["v_free"] - k["v_star"] for k in kept]
        value_diff = max(abs(k["lp_policy_values"][0] - k["v_star"]) for k in kept)
        util_margin = min(k["lp_policy_values"][1] - k["threshold"] for k in kept)
        worst_value, worst_util = max(worst_value, value_diff), min(worst_util, util_margin)
        summary[name] = {
            "kind": sp.kind, "S": sp.S, "A": sp.A, "H": sp.H, "d": sp.d,
            "threshold_scale": sp.threshold_scale, "kept": len(kept), "rejected_non_binding": rejected,
            "draws": len(kept) + rejected, "binding_gap_min": min(gaps), "binding_gap_mean": float(np.mean(gaps)),
            "v_star_mean": float(np.mean([k["v_star"] for k in kept])),
            "multiplier_mean": float(np.mean([k["multiplier"] for k in kept])),
            "slater_gap_min": min(float(k["safe_values"][1] - k["threshold"]) for k in kept),
            "lp_vs_backward_max_abs_diff": value_diff, "lp_policy_utility_margin_min": util_margin,
        }
        log(f"  seed {seed}, {name}: {len(kept)} binding instances, {rejected} non-binding draws rejected; "
            f"V* mean {summary[name]['v_star_mean']:.3f}, binding gap min {min(gaps):.3f}")
    return instances, {"setups": summary, "instances": len(instances),
                       "rejected_non_binding": sum(s["rejected_non_binding"] for s in summary.values()),
                       "optimum": {"lp_vs_backward_max_abs_diff": worst_value,
                                   "lp_policy_utility_margin_min": worst_util}}


def main() -> None:
    with stage("linear_cmdp", "prepare", LinearCmdpParams) as ctx:
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        pp = ctx.params.prepare
        instances, per_seed = [], {}
        for seed in ctx.seeds:
            own, per_seed[seed] = seed_instances(pp, seed, log=lambda s: print(s, flush=True))
            instances += own
        write_json(ctx.path(INSTANCES), {"seeds": list(ctx.seeds), "instances": instances})
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(per_seed))


if __name__ == "__main__":
    main()
