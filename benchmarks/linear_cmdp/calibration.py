"""linear_cmdp calibration, on calibration seeds only (>= 1000, never a verdict seed): how many
instances each verdict seed holds, and whether the zero-violation must's control sees the
paper's idea.

Runs the study's own functions (prepare.seed_instances, train.train_runs, evaluate.seed_figures)
on the calibration seeds with the profile's settings, then judges every claim's figure as the
ledger would (stages.common.inference.judge: rule every_seed for the violation counts, the
t-interval of the per-seed mean for the slopes), once per number of instances per setup in
``--subsets``: a subset keeps each seed's first n binding instances of every setup (a run's
random stream depends on its seed, agent and instance alone, so these are exactly the runs a
profile with ``instances: n`` makes). It also prints what the control (OPSE without its
pessimism, C_u = 0) does in the first ``--short`` episodes of its runs (the same episodes as a
run of that length: runs are causal and draw their noise in episode order), and the CPU seconds
of each step.

    nice -n 10 python -m benchmarks.linear_cmdp.calibration [--seeds 1000,...] [--subsets 2,3,4]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def first_n(insts: list[dict], n: int) -> set[int]:
    """Indices of each setup's first n instances of one seed (the ones a profile with
    ``instances: n`` keeps: binding draws in draw order)."""
    keep: set[int] = set()
    for setup in dict.fromkeys(r["setup"] for r in insts):
        keep |= {r["index"] for r in insts if r["setup"] == setup and
                 r["index"] in [x["index"] for x in insts if x["setup"] == setup][:n]}
    return keep


def restrict(res: dict, keep: set[int]) -> dict:
    """One seed's arrays (``<agent>/<field>``) on the runs whose instance index is in ``keep``."""
    import numpy as np

    out = {}
    agents = {k.rsplit("/", 1)[0] for k in res}
    for a in agents:
        sel = np.isin(res[f"{a}/instance"], sorted(keep))
        for k, v in res.items():
            if k.rsplit("/", 1)[0] == a:
                out[k] = v[sel]
    return out


def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--subsets", default=None, help="instances per setup to judge (default: 2..the profile's)")
    ap.add_argument("--short", type=int, default=2000, help="episodes of the control's shorter run")
    ap.add_argument("--instances", type=int, default=None, help="binding instances per setup to draw "
                    "(default: the profile's)")
    a, seeds = parse_seeds(ap, short=100)

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.common.runtime.params import load_study
    from stages.linear_cmdp.evaluate import seed_figures
    from stages.linear_cmdp.instances import as_record
    from stages.linear_cmdp.params import PARAMS
    from stages.linear_cmdp.prepare import seed_instances
    from stages.linear_cmdp.train import result_key, train_runs

    limit_threads(1)
    _, p = load_study("linear_cmdp", PARAMS, profile=a.profile)
    pp, tp, ep = p.prepare, p.train, p.evaluate
    if a.instances:
        pp = pp.model_copy(update={"setups": {k: v.model_copy(update={"instances": a.instances})
                                              for k, v in pp.setups.items()}})
    n_max = min(sp.instances for sp in pp.setups.values())
    subsets = [int(x) for x in a.subsets.split(",")] if a.subsets else list(range(min(2, n_max), n_max + 1))
    agents = [x.name for x in tp.agents]
    print(f"profile {a.profile}: setups {', '.join(f'{k} x{v.instances}' for k, v in pp.setups.items())}; "
          f"agents {', '.join(f'{x.name} (K={x.episodes})' for x in tp.agents)}; calibration seeds {seeds}",
          flush=True)

    t0 = time.process_time()
    insts, summaries = [], {}
    for seed in seeds:
        own, summaries[seed] = seed_instances(pp, seed, log=lambda s: None)
        insts += [as_record(r) for r in own]
    t_prep = time.process_time() - t0
    print(f"prepare: {len(insts)} instances, {t_prep:.1f} CPU s", flush=True)
    t0 = time.process_time()
    res, timing = train_runs(insts, tp, log=lambda s: print(s, flush=True), progress=False)
    t_train = time.process_time() - t0
    parts = ", ".join(f"{k} {v['cpu_seconds']:.1f}" for k, v in timing.items())
    print(f"train: {t_train:.1f} CPU s ({parts})", flush=True)

    seed_insts = {s: [r for r in insts if r["seed"] == s] for s in seeds}
    seed_res = {s: {k.split("/", 1)[1]: v for k, v in res.items() if k.startswith(f"s{s}/")} for s in seeds}
    abl = ep.no_pessimism_agent
    for n in subsets:
        t0 = time.process_time()
        figs = {}
        for s in seeds:
            keep = first_n(seed_insts[s], n)
            figs[s] = seed_figures(restrict(seed_res[s], keep), seed_insts[s], s, agents, ep, summaries[s])
            thr = np.array([seed_insts[s][i]["threshold"] for i in seed_res[s][f"{abl}/instance"]])[:, None]
            sel = np.isin(seed_res[s][f"{abl}/instance"], sorted(keep))
            V_u = seed_res[s][f"{abl}/V_u"][sel][:, :a.short]
            figs[s]["no_pessimism_short"] = int((V_u < thr[sel] - ep.violation_tol).sum())
        t_eval = time.process_time() - t0
        print(f"\n== {n} binding instances per setup and seed (evaluate {t_eval:.1f} CPU s)")
        rows = [
            ("must zero_violation_every_instance", "main.violating_episodes", "<=", 0, "every_seed"),
            ("  control: no pessimism (C_u = 0)", "no_pessimism.violating_episodes", "<=", 0, "every_seed"),
            (f"  control, first {a.short} episodes", "no_pessimism_short", "<=", 0, "every_seed"),
            ("must primal_dual_violates", "primal_dual.violating_episodes", ">=", 1, "every_seed"),
            ("must regret_slope_tabular", "main.setups.tabular.slope", "<=", 0.7, "interval"),
            ("must regret_slope_linear", "main.setups.linear.slope", "<=", 0.7, "interval"),
            ("  no pessimism: slope tabular", "no_pessimism.setups.tabular.slope", "<=", 0.7, "interval"),
            ("  no pessimism: slope linear", "no_pessimism.setups.linear.slope", "<=", 0.7, "interval"),
            ("should official_constant_zero_violation", "agents.opse_cu1.violating_episodes", "<=", 0, "every_seed"),
            ("should official_linear_constants_slope", "agents.opse_linear_official.setups.linear.slope", "<=", 0.7,
             "interval"),
            ("should dope_zero_violation", "agents.dope.violating_episodes", "<=", 0, "every_seed"),
        ]
        for label, key, op, thr, rule in rows:
            vals = []
            for s in seeds:
                cur = figs[s]
                for part in key.split("."):
                    cur = cur.get(part) if isinstance(cur, dict) else None
                vals.append(cur)
            if any(v is None for v in vals):
                print(f"  {label:42s} (not run)")
                continue
            j = judge([float(v) for v in vals], op, thr, rule)
            iv = f" 90% interval [{j.interval[0]:.3f}, {j.interval[1]:.3f}]" if j.interval else ""
            shown = " ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in vals)
            print(f"  {label:42s} per seed [{shown}] mean {j.mean:.3f}{iv} -> {j.verdict} ({rule} {op} {thr})")
        for s in seeds:
            m = figs[s]
            print(f"  seed {s}: main min utility margin {m['main']['min_utility_margin']:.3f}, safe deployments "
                  f"{m['main']['safe_deployments']}; no pessimism max shortfall {m['no_pessimism']['max_violation']:.3g}, "
                  f"first violation at episode {m['no_pessimism']['first_violation_episode']}; regret at K tabular "
                  f"{m['main']['setups']['tabular']['regret_at_K']:.0f} (no pessimism "
                  f"{m['no_pessimism']['setups']['tabular']['regret_at_K']:.0f}), linear "
                  f"{m['main']['setups']['linear']['regret_at_K']:.0f} "
                  f"({m['no_pessimism']['setups']['linear']['regret_at_K']:.0f})")
    print(f"\ntotal {t_prep + t_train:.1f} CPU s for prepare and train ({len(seeds)} seeds); keys e.g. "
          f"{result_key(seeds[0], agents[0], 'V_r')}", flush=True)


if __name__ == "__main__":
    main()
