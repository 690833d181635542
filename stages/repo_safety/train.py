"""repo_safety train: the baseline and RePO on every instance, and the per-prompt optimum.

For each f of the sweep (stages/repo_safety/policy.py for the methods):

* ``baseline``: the expected-constraint primal-dual (Safe RLHF's PPO-Lagrangian update on a softmax
  bandit policy), with exact and with sampled (REINFORCE) gradients;
* ``repo``: RePO's rectified per-prompt penalty with the safety margin, exact and sampled;
* ``optimum``: the per-prompt-constrained LP (no KL) solved by HiGHS, cross-checked by our own pair
  enumeration; for context the per-prompt optimum WITH the same KL regulariser, at the budget and at
  budget - margin (RePO's exact-gradient run should end near the latter), and the exact expected-
  constraint optimum softmax((reward - lambda* cost) / beta) that the baseline should reach.

Every policy is scored exactly (expected helpfulness, expected cost of every prompt).

Outputs: data/repo_safety/policies.npz (per-prompt expected costs and helpfulness of every
policy), data/repo_safety/curves.json (training curves; the exact-gradient ones are also logged
to MLflow with their steps), reports/repo_safety/train.json (figures; the timings go to MLflow
only, so the file is a pure function of the params).
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import fail, stage

from .data import fraction_key, load
from .params import RepoSafetyParams
from .paths import CURVES, INSTANCES, POLICIES, TRAIN_METRICS
METHODS = {"baseline": "expected", "repo": "rectified"}
MODES = ("exact", "sampled")


def run_instance(reward, cost, harmful, beta: float, budget: float, tp, seed: int, key: str,
                 progress=None) -> tuple[dict, dict, dict, dict]:
    """(figures, per-prompt arrays, training curves, seconds) of every method on one instance."""
    import numpy as np

    from .bandit import expected, expected_constraint_multiplier, kl_policy
    from .optimum import kl_per_prompt, lp_highs, lp_pairs
    from .policy import evaluate_policy, train, violates

    figs: dict = {}
    arrays: dict = {}
    curves: dict = {}
    seconds: dict = {}

    def score(name: str, pi) -> dict:
        ev = evaluate_policy(pi, reward, cost, budget, beta)
        jc = expected(pi, cost)
        ev["violating_harmful"] = float(violates(jc[harmful], budget).mean())
        ev["violating_benign"] = float(violates(jc[~harmful], budget).mean())
        arrays[f"{key}__{name}__cost"] = jc
        arrays[f"{key}__{name}__helpfulness"] = expected(pi, reward)
        return ev

    for mi, (name, method) in enumerate(METHODS.items()):
        dual = tp.baseline_dual if name == "baseline" else tp.repo_dual
        for mode in MODES:
            steps = tp.steps if mode == "exact" else tp.sampled.steps
            lr = tp.lr if mode == "exact" else tp.sampled.lr
            t0 = time.perf_counter()
            tr = train(reward, cost, beta, budget, method, mode, steps, lr, dual.update, dual.init, dual.lr,
                       dual.max, tp.margin, tp.sampled.samples_per_prompt, tp.log_every,
                       np.random.default_rng([seed, round(1000 * float(key)), mi]), progress)
            seconds[f"{name}_{mode}"] = time.perf_counter() - t0
            figs[f"{name}_{mode}"] = dict(score(f"{name}_{mode}", tr.pi), **{"lambda": tr.lam})
            curves[f"{name}_{mode}"] = tr.curve
    t0 = time.perf_counter()
    pi_lp, h_lp, mu_lp = lp_highs(reward, cost, budget)
    seconds["optimum_lp_highs"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    _, h_pairs = lp_pairs(reward, cost, budget)
    seconds["optimum_lp_pairs"] = time.perf_counter() - t0
    figs["optimum_lp"] = dict(score("optimum_lp", pi_lp), pairs_helpfulness=h_pairs,
                              pairs_gap=abs(h_pairs - h_lp), max_multiplier=float(mu_lp.max()))
    pi_kl, mu_kl = kl_per_prompt(reward, cost, beta, budget)
    figs["optimum_kl"] = dict(score("optimum_kl", pi_kl), max_multiplier=float(mu_kl.max()))
    pi_klm, mu_klm = kl_per_prompt(reward, cost, beta, budget - tp.margin)
    figs["optimum_kl_margin"] = dict(score("optimum_kl_margin", pi_klm), max_multiplier=float(mu_klm.max()))
    lam_star = expected_constraint_multiplier(reward, cost, beta, budget)
    figs["expected_optimum"] = dict(score("expected_optimum", kl_policy(reward - lam_star * cost, beta)),
                                    lambda_star=lam_star)
    return figs, arrays, curves, seconds


def main() -> None:
    with stage("repo_safety", "train", RepoSafetyParams) as ctx:
        import json

        from tqdm import tqdm

        from stages.common.io import write_json, write_npz

        tp = ctx.params.train
        try:
            meta = json.loads(ctx.path(INSTANCES).read_text())
            fractions = sorted(float(k) for k in meta["instances"])
            data = load(ctx.root, fractions)
        except (FileNotFoundError, ValueError, KeyError) as err:
            fail(f"the bandit data are missing or unreadable ({err}); run `dvc repro stages/repo_safety/dvc.yaml:repo_safety-prepare`")
        beta, budget = float(meta["beta"]), float(meta["budget"])
        total = len(fractions) * len(METHODS) * (tp.steps + tp.sampled.steps)
        out: dict = {"beta": beta, "budget": budget, "margin": tp.margin, "instances": {}}
        arrays: dict = {}
        curves: dict = {}
        t0 = time.perf_counter()
        with tqdm(total=total, desc="repo_safety train", unit="step", mininterval=2.0) as bar:
            for f in fractions:
                key = fraction_key(f)
                reward, cost, harmful = data[key]
                figs, arr, curves[key], secs = run_instance(reward, cost, harmful, beta, budget, tp, ctx.seed,
                                                            key, bar)
                out["instances"][key] = figs
                ctx.run.log_metrics({f"seconds.f{key}": secs})
                arrays.update(arr)
                arrays[f"{key}__harmful"] = harmful
        ctx.run.log_metrics({"seconds.total": time.perf_counter() - t0})
        write_npz(ctx.path(POLICIES), arrays)
        write_json(ctx.path(CURVES), curves)
        write_json(ctx.path(TRAIN_METRICS), out)
        t0 = time.perf_counter()
        for key, by_run in curves.items():         # exact-gradient runs (sampled: curves.json only)
            for name, c in ((n, c) for n, c in by_run.items() if n.endswith("_exact")):
                for series in ("lambda", "avg_cost", "violating_fraction"):
                    ctx.run.log_curve(f"curve.f{key}.{name}.{series}", c[series], c["step"])
        ctx.run.log_metrics({"seconds.log_curves": time.perf_counter() - t0})
        for key, figs in out["instances"].items():
            b, r, o = figs["baseline_exact"], figs["repo_exact"], figs["optimum_lp"]
            print(f"f={key}: baseline violating {b['violating_fraction']:.3f} helpfulness {b['helpfulness']:.3f} "
                  f"(lambda {b['lambda']:.3f}); RePO violating {r['violating_fraction']:.3f} helpfulness "
                  f"{r['helpfulness']:.3f}; per-prompt LP optimum {o['helpfulness']:.3f}", flush=True)


if __name__ == "__main__":
    main()
