"""Training and evaluation of one or more seeds, shared by the stages (train, evaluate) and the
calibration script: no stage module imports another, so what two of them need lives here (the
test shops and their references: refs.py).

A seed is one independent repetition of the whole study: its own test shops (numpy ``[seed, 0,
set]``) and their CP-SAT references, its own training shops and sampling noise for every arm, its
own evaluation noise (``seed * 1000 + set``, the same for every arm: common random numbers).
"""
from __future__ import annotations

import numpy as np

from .jsp import RULES, SETS, rule_makespans

KEY = {"g10": "gap10", "g15": "gap15", "flow": "gapflow"}          # metrics.json section of each set
L2D_SETS = ("g10", "flow")          # L2D is evaluated on the must's two variants (15x15: its GIN's cost)
TRAINED = ("single", "multi", "blind", "l2d")                       # the trained arms, in order


def train_all(seeds, t, device="cpu", progress=None, arms=TRAINED) -> tuple[dict, dict, dict]:
    """Train every arm of ``arms`` for every seed (each arm's seeds together): ({arm: [net per
    seed]}, {arm: {seed: history}}, {arm: CPU seconds}). ``t``: the train step's params (with
    ``t.l2d``); ``progress(arm, total)``: a context manager giving a tqdm-like bar, or None."""
    import contextlib
    import time

    from .l2d import train_l2d
    from .policy import train_arm

    kw = {k: getattr(t, k) for k in ("steps", "instances", "samples", "n_jobs", "n_machines", "hidden", "lr",
                                     "n_policies", "tau")}
    nets, hist, cpu = {}, {}, {}
    for arm in arms:
        total = t.l2d.updates if arm == "l2d" else t.steps
        bar_cm = progress(arm, total) if progress else contextlib.nullcontext(None)
        c0 = time.process_time()
        with bar_cm as bar:
            if arm == "l2d":
                nets[arm], hist[arm] = train_l2d(seeds, updates=t.l2d.updates, episodes=t.l2d.episodes,
                                                 n_jobs=t.n_jobs, n_machines=t.n_machines, kind="jssp",
                                                 hidden=t.l2d.hidden, hidden_head=t.l2d.hidden_head, lr=t.l2d.lr,
                                                 progress=bar, device=device)
            else:
                nets[arm], hist[arm] = train_arm(arm, seeds, kind="jssp", progress=bar, device=device, **kw)
        cpu[arm] = time.process_time() - c0
    return nets, hist, cpu


def untrained(seeds, t) -> dict:
    """The networks the single and the multi-policy arm start from (the seed's initialisation),
    untrained: the control of the check that learned policies beat the rules."""
    from .policy import init_nets

    return {"untrained_single": init_nets(1, t.hidden, seeds), "untrained_multi": init_nets(t.n_policies, t.hidden,
                                                                                          seeds)}


def gaps(tests: dict, nets: dict, seeds, samples: int, sets=SETS, device="cpu") -> dict:
    """{seed: {set: {method: per-shop gap to CP-SAT in % (array)}}} for the arms ``nets`` ({arm:
    [net per seed]}; L2D on :data:`L2D_SETS` only, also greedily as ``l2d_greedy``) and the rules;
    best of ``samples`` sampled schedules per shop (split evenly over a network's policies), the
    same noise seed ``seed * 1000 + set index`` for every arm."""
    from . import l2d as l2dm
    from .policy import best_of

    seeds = list(seeds)
    out = {s: {} for s in seeds}
    for i, name in enumerate(SETS):
        if name not in sets:
            continue
        M = np.stack([tests[s][f"{name}_machines"] for s in seeds])
        D = np.stack([tests[s][f"{name}_durations"] for s in seeds])
        ref = np.stack([tests[s][f"{name}_ref"] for s in seeds]).astype(float)
        noise = [s * 1000 + i for s in seeds]
        g = {}
        for arm, arm_nets in nets.items():
            if arm == "l2d":
                if name in L2D_SETS:
                    g["l2d"] = 100 * (l2dm.sample_best(arm_nets, M, D, samples, noise, device=device) / ref - 1)
                    g["l2d_greedy"] = 100 * (l2dm.sample_best(arm_nets, M, D, samples, noise, device=device,
                                                              greedy=True) / ref - 1)
                continue
            g[arm] = 100 * (best_of(arm_nets, M, D, samples, noise)[0] / ref - 1)
        for r in RULES:
            g[r] = 100 * (np.stack([rule_makespans(M[k], D[k], r) for k in range(len(seeds))]) / ref - 1)
        for k, s in enumerate(seeds):
            out[s][name] = {meth: v[k] for meth, v in g.items()}
    return out


def figures(per_shop: dict, tests: dict, ci_level: float) -> dict:
    """{seed: metrics} from :func:`gaps`: per set (``gap10``, ``gap15``, ``gapflow``) each method's
    mean gap (%), the paired differences the claims read, within-seed context (the paired t
    interval over the seed's shops of multi - single, wins) and CP-SAT's proved-optimal share."""
    from stages.common.inference import t_interval

    out = {}
    for s, sets in per_shop.items():
        ms = {}
        for name, g in sets.items():
            m = {meth: float(v.mean()) for meth, v in g.items()}
            best_rule = min(RULES, key=lambda r: m[r])
            m |= {"best_rule": best_rule, "best_rule_gap": m[best_rule],
                  "cpsat_optimal_fraction": float(np.mean(tests[s][f"{name}_optimal"])),
                  "instances": int(len(g[best_rule]))}
            if "multi" in m and "single" in m:          # every arm is there in the stages; a calibration may train fewer
                diff = g["multi"] - g["single"]
                lo, hi = t_interval(diff, ci_level)
                m |= {"multi_minus_single": float(diff.mean()), "multi_minus_single_ci_low": lo,
                      "multi_minus_single_ci_high": hi, "multi_wins": int((diff < 0).sum()),
                      "single_wins": int((diff > 0).sum()),
                      "worst_learned_minus_best_rule": max(m["multi"], m["single"]) - m[best_rule]}
            if "untrained_single" in m:
                m["untrained_minus_best_rule"] = max(m["untrained_single"], m["untrained_multi"]) - m[best_rule]
            if "blind" in m and "single" in m:
                m["blind_minus_single"] = m["blind"] - m["single"]
            if "l2d" in m and "multi" in m:
                m |= {"multi_minus_l2d": m["multi"] - m["l2d"], "single_minus_l2d": m["single"] - m["l2d"],
                      "multi_wins_vs_l2d": int((g["multi"] < g["l2d"]).sum())}
            ms[KEY[name]] = m
        out[s] = ms
    return out
