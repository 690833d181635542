"""nac_b calibration, on calibration seeds only (>= 1000, never a verdict seed): the plain
actor-critic's actor step, and whether the headline check sees the paper's idea.

The must ``regret_slope`` reads NAC-B's log-log regret slope over the T sweep (per seed; rule,
op and threshold read from stages/nac_b/claims.yaml). Its control is the same slope of NAC-B
without batching (the ablation: batch 1, the same actor step, the same per-sample critic and NPG
steps). Beside it, a plain actor-critic (policy-gradient actor, no natural gradient, batch 1),
whose actor step is chosen here: the grid value with the lowest mean regret at the largest T over
the calibration seeds. Every arm runs in the study's own code (stages/nac_b/train.regret_sweep),
on each seed's MDP as prepare draws it.

Designs (the MDP of the regret sweep; everything else is the profile's):
* ``study``: the study's regret MDP (6 states, 2 actions, period 2);
* ``alternating``: the batching check's MDP (period 4, rewards alternating by phase), where the
  abstract says batching mitigates periodicity;
* ``larger``: 10 states (2 transient, period 2, 4 per phase), 4 actions, concentration 0.3 (some
  states rarely visited; the natural gradient's case).

Then the batching should (``tuned_batching_helps``) and its control on the calibration seeds, with
the profile's batching sweep (stages/nac_b/train.batching_sweep).

    nice -n 19 python -m benchmarks.nac_b.calibration [--seeds 1000,...] [--designs study,larger]
        [--grid 1,3,10,30,100,300] [--skip-batching] [--smoke]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds, one design.
"""
from __future__ import annotations

import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402

DESIGNS = {"study": None,
           "alternating": "batching_mdp",
           "larger": {"n_transient": 2, "period": 2, "states_per_phase": 4, "n_actions": 4, "concentration": 0.3,
                      "transient_stay": 0.5, "phase_amplitude": 0.0, "action_reward_scale": 1.0}}
PLAIN_GRID = [1.0, 3.0, 10.0, 30.0, 100.0, 300.0]


def claim(claims, cid):
    return next(c for c in claims.claims if c.id == cid)


def judged(values, c) -> str:
    from stages.common.inference import judge

    j = judge(values, c.op, c.threshold, c.rule)
    lo, hi = j.interval if j.interval else (float("nan"), float("nan"))
    return f"per seed [{', '.join(f'{v:.3f}' for v in values)}] mean {j.mean:.3f} [{lo:.3f}, {hi:.3f}] -> {j.verdict}"


def design_mdps(p, design: str, seeds) -> dict:
    """{seed: {"regret": (P, r, info)}} for a design, drawn as prepare draws the regret MDP."""
    from stages.nac_b.prepare import build_mdps, references

    d = DESIGNS[design]
    pp = p.prepare
    if d == "batching_mdp":
        pp = pp.model_copy(update={"regret_mdp": pp.batching_mdp})
    elif isinstance(d, dict):
        pp = pp.model_copy(update={"regret_mdp": pp.regret_mdp.model_copy(update=d)})
    pp = pp.model_copy(update={"max_policies_checked": 1})            # the structure is tested, not needed here
    out = {}
    for s in seeds:
        m = build_mdps(pp, s)["regret"]
        out[s] = {"regret": (m.P, m.r, references(m, pp))}
    return out


def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--grid", default=",".join(map(str, PLAIN_GRID)), help="plain actor-critic actor steps")
    ap.add_argument("--skip-batching", action="store_true")
    a, seeds = parse_seeds(ap, designs="study", grid="1,100")
    grid = [float(g) for g in a.grid.split(",")]

    from pathlib import Path

    import numpy as np

    from stages.common.claims import load_claims
    from stages.common.device import limit_threads
    from stages.common.fits import loglog_slope
    from stages.common.runtime.params import load_study
    from stages.nac_b.params import PARAMS
    from stages.nac_b.train import batching_sweep, regret_arms, regret_sweep

    limit_threads(1)
    repo = Path(__file__).resolve().parents[2]
    claims = load_claims(repo / "stages/nac_b/claims.yaml")
    must = claim(claims, "regret_slope")
    _, p = load_study("nac_b", PARAMS, profile=a.profile)
    rp, tp = p.train.regret, p.train
    print(f"profile {a.profile}: T grid {rp.T_grid}, {rp.runs} runs per T and arm; NAC-B B = {rp.batch_size}, "
          f"steps {rp.actor_step}/{rp.critic_step}/{rp.npg_step}; calibration seeds {seeds}; the must: slope "
          f"{must.op} {must.threshold}, rule {must.rule}", flush=True)
    t_all = time.process_time()
    for design in a.designs.split(","):
        t0 = time.process_time()
        mdps = design_mdps(p, design, seeds)
        B = rp.batch_size
        extra = {f"plain_{g:g}": (rp.runs, 1, g, rp.critic_step / B, 0.0, False) for g in grid}
        res = regret_sweep(mdps, seeds, rp, tp, arms=("nacb", "no_batching"), progress=None, extra=extra)
        T = np.array(rp.T_grid)

        def slopes(arm):
            return [loglog_slope(T, np.array([np.mean(c) for c in res[s][arm]["regret"]]))[0] for s in seeds]

        def at_tmax(arm):
            return float(np.mean([np.mean(res[s][arm]["regret"][-1]) for s in seeds]))

        S, A = mdps[seeds[0]]["regret"][1].shape
        print(f"\n== design {design}: {S} states, {A} actions ({time.process_time() - t0:.0f} CPU s)", flush=True)
        print(f"  must    NAC-B slope            {judged(slopes('nacb'), must)}; regret at T_max {at_tmax('nacb'):.0f}")
        print(f"  control no batching slope      {judged(slopes('no_batching'), must)}; regret at T_max "
              f"{at_tmax('no_batching'):.0f}")
        best = min(grid, key=lambda g: at_tmax(f"plain_{g:g}"))
        for g in grid:
            mark = "  <- lowest regret" if g == best else ""
            print(f"  plain AC alpha {g:<6g}          {judged(slopes(f'plain_{g:g}'), must)}; regret at T_max "
                  f"{at_tmax(f'plain_{g:g}'):.0f}{mark}")
        div = {arm: int(sum(sum(res[s][arm]["diverged"]) for s in seeds)) for arm in res[seeds[0]]
               if isinstance(res[seeds[0]][arm], dict) and "diverged" in res[seeds[0]][arm]}
        print(f"  diverged runs: {div}", flush=True)
        if design == "study":
            print(f"  the profile's plain_actor_step = {rp.plain_actor_step:g} (regret_arms: "
                  f"{regret_arms(rp)['plain_ac']})", flush=True)
    if not a.skip_batching:
        from stages.nac_b.prepare import build_mdps, references

        t0 = time.process_time()
        pp = p.prepare.model_copy(update={"max_policies_checked": 1})
        mdps = {}
        for s in seeds:
            m = build_mdps(pp, s)
            mdps[s] = {k: (m[k].P, m[k].r, references(m[k], pp)) for k in ("batching", "control")}
        bres = batching_sweep(mdps, seeds, p.train.batching, tp, progress=False)
        should = claim(claims, "tuned_batching_helps")
        ratio, ctrl = [], []
        for s in seeds:
            r = bres[s]
            idx = {tuple(c): i for i, c in enumerate(r["eval"]["configs"])}
            tr = {k: {b: np.mean(r["eval"][k]["regret"][idx[(b, r["tuned_step"][str(b)])]]) for b in r["batch_sizes"]}
                  for k in ("batching", "control")}
            best_b = min((b for b in r["batch_sizes"] if b > 1), key=lambda b: tr["batching"][b])
            ratio.append(tr["batching"][1] / tr["batching"][best_b])
            ctrl.append(tr["control"][1] / tr["control"][best_b])
            print(f"  seed {s}: tuned steps {r['tuned_step']}, B* = {r['best_batch']}, B1 {tr['batching'][1]:.0f} vs "
                  f"B{best_b} {tr['batching'][best_b]:.0f}", flush=True)
        print(f"\n== batching should, each batch size at its tuned shared step ({time.process_time() - t0:.0f} CPU s)")
        print(f"  should  B1 / best batched      {judged(ratio, should)}")
        print(f"  control same, no phase rewards {judged(ctrl, should)}")
    print(f"\ntotal {time.process_time() - t_all:.0f} CPU s", flush=True)


if __name__ == "__main__":
    main()
