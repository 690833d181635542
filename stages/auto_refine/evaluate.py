"""auto_refine evaluate: greedy EM of each arm on the held-out questions (single- and multi-hop),
searches per question and search quality; the plot and its table.

Outputs: reports/auto_refine/metrics.json, reports/auto_refine/em.png and reports/auto_refine/em.csv."""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import KB, METRICS, PLOT, PLOT_DATA, POLICIES

PROTOCOL = {"refine": "refine", "refine_noret": "refine", "norefine": "norefine", "refine_untrained": "refine"}


def main() -> None:
    with stage("auto_refine", "evaluate", PARAMS) as ctx:
        import io
        import json

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from .refine import Scorer, build_env, evaluate_policy, n_features

        limit_threads(1)
        kb = json.loads(ctx.path(KB).read_text())
        docs = [tuple(d) for d in kb["docs"]]
        train_q, test_q = [tuple(q) for q in kb["train"]], [tuple(q) for q in kb["test"]]
        p = ctx.params.train
        env = build_env(docs, p.k, train_q + test_q)
        states = torch.load(io.BytesIO(ctx.path(POLICIES).read_bytes()))
        arms = {}
        for arm, proto in PROTOCOL.items():
            pol = Scorer(n_features(p.k), p.hidden)
            pol.load_state_dict(states[arm])
            arms[arm] = evaluate_policy(pol, env, test_q, proto)
        a, b, u, n = arms["refine"], arms["refine_noret"], arms["refine_untrained"], arms["norefine"]
        overlap = len({s for s, _ in train_q} & {s for s, _ in test_q})
        m = {"arms": arms, "test_train_subject_overlap": overlap, "must_margin": ctx.params.evaluate.must_margin,
             "claim": {"multi_gain": a["em_multi"] - n["em_multi"],
                       "single_gain": a["em_single"] - n["em_single"],
                       "gain_multi_minus_single": (a["em_multi"] - n["em_multi"]) - (a["em_single"] - n["em_single"]),
                       "retrieval_reward_gain": a["em_multi"] - b["em_multi"],
                       "ablation_multi_gain": b["em_multi"] - n["em_multi"],
                       "control_untrained_multi_gain": u["em_multi"] - n["em_multi"],
                       "search_quality_gain": a["search_quality"] - n["search_quality"]}}
        write_json(ctx.path(METRICS), m)
        rows = [{"method": arm, "hops": hops, "em": v[f"em_{hops}"]} for arm, v in arms.items()
                for hops in ("single", "multi")]
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(6, 3.5))
        x = np.arange(2)
        for j, (arm, v) in enumerate(arms.items()):
            ax.bar(x + (j - 1.5) * 0.2, [v["em_single"], v["em_multi"]], 0.2, label=arm)
        ax.set(xticks=x, xticklabels=["single-hop", "multi-hop"], ylabel="test EM", ylim=(0, 1.05),
               title="auto_refine: held-out EM by arm")
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT))
        for arm, v in arms.items():
            print(f"  {arm:17s} EM single {v['em_single']:.3f} multi {v['em_multi']:.3f} "
                  f"search quality {v['search_quality']:.3f}", flush=True)


if __name__ == "__main__":
    main()
