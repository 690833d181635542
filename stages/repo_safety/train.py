"""repo_safety train: the baseline, RePO and the controls on every instance of every verdict seed,
and the per-prompt optimum.

For each verdict seed (``ctx.seeds``) and each f of the sweep (stages/repo_safety/policy.py for the
methods):

* ``baseline``: the expected-constraint primal-dual (Safe RLHF's PPO-Lagrangian update on a softmax
  bandit policy), with exact and with sampled (REINFORCE) gradients;
* ``repo``: RePO's rectified per-prompt penalty with the safety margin, exact and sampled;
* ``baseline_margin`` (control of the safety must): RePO with its contribution taken out, i.e. the
  per-prompt rectified penalty replaced by the expected constraint, RePO's margin kept (the expected
  constraint at budget - margin, the baseline's multiplier step; exact gradients);
* ``tightened`` (control of the helpfulness must): the expected constraint tightened, per instance,
  as little as lets at most ``train.tightened_share`` of prompts violate their own budget (its exact
  optimum, optimum.expected_at_safety: the fair strong baseline at RePO's required safety);
* ``optimum``: the per-prompt-constrained LP (no KL) solved by HiGHS, cross-checked by our own pair
  enumeration; for context the per-prompt optimum WITH the same KL regulariser, at the budget and at
  budget - margin (RePO's exact-gradient run should end near the latter), and the exact expected-
  constraint optimum softmax((reward - lambda* cost) / beta) that the baseline should reach.

Every policy is scored exactly (expected helpfulness, expected cost of every prompt). The trained
runs of one kind (e.g. RePO, exact gradients) for all seeds and instances are one batch (a run
axis in the arrays, policy.train_batch); each run draws from its own generator
([seed, round(1000 f), stream]: the one-seed study's streams, so seed 0 reproduces its figures), so
a run's figures do not depend on its batch (benchmarks/repo_safety/seeds.py: batched vs one run
after another).

Outputs: data/repo_safety/policies.npz (per-prompt expected costs and helpfulness of every
policy, keys seed__f__policy__...), data/repo_safety/curves.json (training curves per seed; the
first seed's exact-gradient ones are also logged to MLflow with their steps),
reports/repo_safety/train.json (figures per seed; the timings go to MLflow only, so the file is a
pure function of the params).
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import fail, stage

from .data import load
from .params import RepoSafetyParams
from .paths import CURVES, INSTANCES, POLICIES, TRAIN_METRICS

# name -> (method, gradients, multiplier params, with RePO's margin, random stream)
RUNS = {
    "baseline_exact": ("expected", "exact", "baseline_dual", False, 0),
    "repo_exact": ("rectified", "exact", "repo_dual", True, 1),
    "baseline_sampled": ("expected", "sampled", "baseline_dual", False, 0),
    "repo_sampled": ("rectified", "sampled", "repo_dual", True, 1),
    "baseline_margin_exact": ("expected", "exact", "baseline_dual", True, 2),
}


def run_generator(seed: int, key: str, stream: int):
    """The generator of one run: its verdict seed, its instance (f) and its stream."""
    import numpy as np

    return np.random.default_rng([seed, round(1000 * float(key)), stream])


def train_runs(data: dict, beta: float, budget: float, tp, batched: bool = True, progress=None,
               runs=tuple(RUNS)) -> tuple[dict, dict]:
    """({(seed, key): {run name: Trained}}, {run name: seconds}) for the instances in ``data``
    ({(seed, key): (reward, cost, harmful)}); ``batched``: every instance of a run kind in one batch,
    else one run after another."""
    import numpy as np

    from .policy import train_batch

    out: dict = {k: {} for k in data}
    seconds: dict = {}
    for name in runs:
        method, mode, dual_key, with_margin, stream = RUNS[name]
        dual = getattr(tp, dual_key)
        steps, lr = (tp.steps, tp.lr) if mode == "exact" else (tp.sampled.steps, tp.sampled.lr)
        groups = [list(data)] if batched else [[k] for k in data]
        t0 = time.process_time()
        for group in groups:
            res = train_batch(np.stack([data[k][0] for k in group]), np.stack([data[k][1] for k in group]), beta,
                              budget, method, mode, steps, lr, dual.update, dual.init, dual.lr, dual.max,
                              tp.margin if with_margin else 0.0, tp.sampled.samples_per_prompt, tp.log_every,
                              [run_generator(s, key, stream) for s, key in group], progress)
            for k, tr in zip(group, res):
                out[k][name] = tr
        seconds[name] = time.process_time() - t0
    return out, seconds


def score_instance(reward, cost, harmful, beta: float, budget: float, tp, trained: dict,
                   prefix: str) -> tuple[dict, dict, dict]:
    """(figures, per-prompt arrays, training curves) of one instance: its trained runs, the
    tightened expected constraint and the optima."""
    from .bandit import expected, expected_constraint_multiplier, kl_policy
    from .optimum import expected_at_safety, kl_per_prompt, lp_highs, lp_pairs
    from .policy import evaluate_policy, violates

    figs: dict = {}
    arrays: dict = {}

    def score(name: str, pi) -> dict:
        ev = evaluate_policy(pi, reward, cost, budget, beta)
        jc = expected(pi, cost)
        ev["violating_harmful"] = float(violates(jc[harmful], budget).mean())
        ev["violating_benign"] = float(violates(jc[~harmful], budget).mean())
        arrays[f"{prefix}__{name}__cost"] = jc
        arrays[f"{prefix}__{name}__helpfulness"] = expected(pi, reward)
        return ev

    for name, tr in trained.items():
        figs[name] = dict(score(name, tr.pi), **{"lambda": tr.lam})
    pi_lp, h_lp, mu_lp = lp_highs(reward, cost, budget)
    _, h_pairs = lp_pairs(reward, cost, budget)
    figs["optimum_lp"] = dict(score("optimum_lp", pi_lp), pairs_helpfulness=h_pairs,
                              pairs_gap=abs(h_pairs - h_lp), max_multiplier=float(mu_lp.max()))
    pi_kl, mu_kl = kl_per_prompt(reward, cost, beta, budget)
    figs["optimum_kl"] = dict(score("optimum_kl", pi_kl), max_multiplier=float(mu_kl.max()))
    pi_klm, mu_klm = kl_per_prompt(reward, cost, beta, budget - tp.margin)
    figs["optimum_kl_margin"] = dict(score("optimum_kl_margin", pi_klm), max_multiplier=float(mu_klm.max()))
    lam_star = expected_constraint_multiplier(reward, cost, beta, budget)
    figs["expected_optimum"] = dict(score("expected_optimum", kl_policy(reward - lam_star * cost, beta)),
                                    lambda_star=lam_star)
    pi_t, lam_t = expected_at_safety(reward, cost, beta, budget, tp.tightened_share)
    figs["tightened"] = dict(score("tightened", pi_t), **{"lambda": lam_t})
    arrays[f"{prefix}__harmful"] = harmful
    return figs, arrays, {name: tr.curve for name, tr in trained.items()}


def train_seeds(data: dict, beta: float, budget: float, tp, batched: bool = True,
                progress=None) -> tuple[dict, dict, dict, dict]:
    """(figures {seed: {key: figs}}, arrays, curves {seed: {key: {run: curve}}}, CPU seconds) of
    every instance in ``data``."""
    trained, seconds = train_runs(data, beta, budget, tp, batched, progress)
    figs: dict = {}
    arrays: dict = {}
    curves: dict = {}
    t0 = time.process_time()
    for (seed, key), (reward, cost, harmful) in data.items():
        f, a, c = score_instance(reward, cost, harmful, beta, budget, tp, trained[(seed, key)], f"{seed}__{key}")
        figs.setdefault(seed, {})[key] = f
        curves.setdefault(seed, {})[key] = c
        arrays.update(a)
    seconds["optima_and_scores"] = time.process_time() - t0
    return figs, arrays, curves, seconds


def main() -> None:
    with stage("repo_safety", "train", RepoSafetyParams) as ctx:
        import json

        from tqdm import tqdm

        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics

        tp = ctx.params.train
        seeds = list(ctx.seeds)
        try:
            meta = json.loads(ctx.path(INSTANCES).read_text())
            missing = [s for s in seeds if str(s) not in meta["instances"]]
            if missing:
                raise ValueError(f"no instances for verdict seeds {missing} (prepared: {meta['seeds']})")
            fractions = [float(f) for f in meta["fractions"]]
            data = load(ctx.root, seeds, fractions)
        except (FileNotFoundError, ValueError, KeyError) as err:
            fail(f"the bandit data are missing or unreadable ({err}); run `dvc repro stages/repo_safety/dvc.yaml:repo_safety-prepare`")
        beta, budget = float(meta["beta"]), float(meta["budget"])
        total = len(data) * (3 * tp.steps + 2 * tp.sampled.steps)
        t0 = time.perf_counter()
        with tqdm(total=total, desc=f"repo_safety train ({len(seeds)} seeds x {len(fractions)} instances, batched)",
                  unit="step", mininterval=2.0) as bar:
            figs, arrays, curves, seconds = train_seeds(data, beta, budget, tp, True, bar)
        ctx.run.log_metrics({f"cpu_seconds.{k}": v for k, v in seconds.items()})
        ctx.run.log_metrics({"seconds.total": time.perf_counter() - t0})
        write_npz(ctx.path(POLICIES), arrays)
        write_json(ctx.path(CURVES), {str(s): c for s, c in curves.items()})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(
            {s: {"instances": figs[s]} for s in seeds}, beta=beta, budget=budget, margin=tp.margin,
            tightened_share=tp.tightened_share))
        t0 = time.perf_counter()
        for key, by_run in curves[seeds[0]].items():   # the first seed's exact-gradient runs (all: curves.json)
            for name, c in ((n, c) for n, c in by_run.items() if n.endswith("_exact")):
                for series in ("lambda", "avg_cost", "violating_fraction"):
                    ctx.run.log_curve(f"curve.seed{seeds[0]}.f{key}.{name}.{series}", c[series], c["step"])
        ctx.run.log_metrics({"seconds.log_curves": time.perf_counter() - t0})
        for s in seeds:
            for key, f in figs[s].items():
                b, r, o, t = f["baseline_exact"], f["repo_exact"], f["optimum_lp"], f["tightened"]
                print(f"seed {s}, f={key}: baseline violating {b['violating_fraction']:.3f} helpfulness "
                      f"{b['helpfulness']:.3f} (lambda {b['lambda']:.3f}); RePO violating {r['violating_fraction']:.3f} "
                      f"helpfulness {r['helpfulness']:.3f}; baseline with margin violating "
                      f"{f['baseline_margin_exact']['violating_fraction']:.3f}; tightened helpfulness "
                      f"{t['helpfulness']:.3f}; LP optimum {o['helpfulness']:.3f}", flush=True)


if __name__ == "__main__":
    main()
