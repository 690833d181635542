"""escort_belief ablation (by hand, not a DVC stage): which part of ESCORT changes the light-dark
result. Runs the light-dark episodes of the active profile (``--episodes`` of them, default 32)
with ESCORT's two terms switched on and off (lambda_corr, lambda_temp in {0, the profile's value})
and prints mean return, success rate and belief-mean error for each. (0, 0) is SVGD. It runs a
calibration seed (>= 1000, default 1000), never a verdict seed (docs/VERDICTS.md).

    python -m stages.escort_belief.ablation [--episodes 32] [--seed 1000]
"""
from __future__ import annotations

import argparse


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1000, help="a calibration seed (>= 1000)")
    a = ap.parse_args()
    if a.seed < 1000:
        ap.error(f"--seed {a.seed}: the ablation runs calibration seeds (>= 1000) only")
    from stages.common.runtime.params import load_study

    from .lightdark import run_episodes
    from .params import EscortBeliefParams
    from .stein import SteinConfig

    _, p = load_study("escort_belief", EscortBeliefParams)
    lp = p.train.lightdark.model_copy(update={"episodes": a.episodes})
    st, es = lp.stein, p.train.escort
    for lc in (es.lambda_corr, 0.0):
        for lt in (es.lambda_temp, 0.0):
            cfg = SteinConfig(iters=st.iters, step=st.step, final_step_frac=st.final_step_frac,
                              lambda_corr=lc, lambda_temp=lt)
            r = run_episodes("escort", lp, cfg, [a.seed])[a.seed]
            print(f"lambda_corr={lc} lambda_temp={lt}: return {r['returns'].mean():.2f}, success "
                  f"{r['success'].mean():.2f}, declared {r['declared'].mean():.2f}, belief-mean error "
                  f"{r['mean_error']:.3f}", flush=True)


if __name__ == "__main__":
    main()
