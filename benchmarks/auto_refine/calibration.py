"""Calibration of auto_refine on calibration seeds only (>= 1000): the three arms (AutoRefine,
AutoRefine without the retrieval reward, Search-R1 style) trained with the same budget, at the
GRPO step counts given, on each seed's own knowledge base (the study's functions:
refine.make_data, build_env, train_arms, evaluate_policy, seed_figures).

    nice -n 10 python benchmarks/auto_refine/calibration.py [--seeds 1000,...] [--steps 40,100,200]
        [--set train.lr=0.01 ...] [--profile default]

Prints per seed and step count each arm's held-out EM (single / multi-hop), search quality and
final training reward, then the mean over seeds of the figures the claims read. ``--smoke`` runs
it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds, 5 steps.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import cpu_self, parse_seeds, seed_parser, study_params  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--steps", default="", help="GRPO step counts, comma-separated (default: the profile's)")
    a, seeds = parse_seeds(ap, steps="5")

    import numpy as np

    from stages.auto_refine.params import PARAMS
    from stages.auto_refine.refine import ARMS, arm_figures, build_env, make_data, seed_figures, train_arms
    from stages.common.device import limit_threads

    limit_threads(1)
    p = study_params("auto_refine", PARAMS, a)
    steps = [int(x) for x in a.steps.split(",")] if a.steps else [p.train.steps]
    for n_steps in steps:
        if n_steps % p.train.eval_every:
            raise SystemExit(f"--steps {n_steps}: a multiple of train.eval_every ({p.train.eval_every}) please")
    pp = p.prepare
    for n_steps in steps:
        pt = p.train.model_copy(update={"steps": n_steps})
        figs = []
        for seed in seeds:
            c0 = cpu_self()
            docs, train_q, test_q = make_data(pp.n_people, pp.n_cities, pp.n_distractors, pp.test_frac, seed)
            env = build_env(docs, pt.k, train_q + test_q)
            trained = train_arms(env, train_q, test_q, pt, seed)
            arms = {arm: arm_figures([r[0] for r in runs], env, test_q, arm, [r[2] for r in runs],
                                     [r[1] for r in runs], p.evaluate.reward_window)
                    for arm, runs in trained.items()}
            f = seed_figures(arms)
            figs.append(f)
            print(f"steps {n_steps} seed {seed} ({cpu_self() - c0:.1f} s CPU): " + "; ".join(
                f"{arm} EM {v['em_single']:.2f}/{v['em_multi']:.2f} (curve mean {v['em_single_auc']:.2f}/{v['em_multi_auc']:.2f}) "
                f"sq {v['search_quality']:.2f} "
                f"train r {v['final_train_reward'] if v['final_train_reward'] is None else round(v['final_train_reward'], 2)}"
                for arm, v in arms.items()), flush=True)
        mean = {k: float(np.mean([f["claim"][k] for f in figs])) for k in figs[0]["claim"]}
        em = {arm: float(np.mean([f["arms"][arm]["em_multi"] for f in figs])) for arm in ARMS}
        em_auc = {arm: float(np.mean([f["arms"][arm]["em_multi_auc"] for f in figs])) for arm in ARMS}
        print(f"steps {n_steps}, mean over {len(seeds)} calibration seeds: final multi-hop EM "
              + ", ".join(f"{k} {v:.3f}" for k, v in em.items()) + "; learning-curve mean "
              + ", ".join(f"{k} {v:.3f}" for k, v in em_auc.items()) + "; "
              + ", ".join(f"{k} {v:+.3f}" for k, v in mean.items()), flush=True)
    t = time.process_time()
    print(f"total {t:.1f} s CPU")


if __name__ == "__main__":
    main()
