"""auto_refine evaluate: on every verdict seed, each arm's held-out figures: greedy EM on single- and
multi-hop questions and search quality of the final policy, and their means over the arm's
held-out learning curve, each averaged over the seed's training replications (the evaluations after every eval_every GRPO steps, train); the claims'
differences; the plot and its table.

Outputs: reports/auto_refine/metrics.json (every verdict seed's figures under ``per_seed``, their
means beside them; stages.common.seeds.per_seed_metrics), reports/auto_refine/em.png (learning-curve
mean EM per arm, and the multi-hop learning curves, mean over the seeds) and reports/auto_refine/em.csv."""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CURVES, KB, METRICS, PLOT, PLOT_DATA, POLICIES


def main() -> None:
    with stage("auto_refine", "evaluate", PARAMS) as ctx:
        import io
        import json

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        from .refine import ARMS, Scorer, arm_figures, build_env, n_features, seed_figures

        limit_threads(1)
        kb = json.loads(ctx.path(KB).read_text())["seeds"]
        curves = json.loads(ctx.path(CURVES).read_text())
        states = torch.load(io.BytesIO(ctx.path(POLICIES).read_bytes()))
        p = ctx.params.train
        results = {}
        for seed in ctx.seeds:
            d = kb[str(seed)]
            docs = [tuple(x) for x in d["docs"]]
            train_q, test_q = [tuple(q) for q in d["train"]], [tuple(q) for q in d["test"]]
            env = build_env(docs, p.k, train_q + test_q)
            arms = {}
            for arm in ARMS:
                pols = []
                for sd in states[str(seed)][arm]:
                    pol = Scorer(n_features(p.k), p.hidden)
                    pol.load_state_dict(sd)
                    pols.append(pol.eval())
                c = curves[str(seed)][arm]
                arms[arm] = arm_figures(pols, env, test_q, arm, [r["heldout"] for r in c],
                                        [r["train_reward"] for r in c], ctx.params.evaluate.reward_window)
            results[seed] = {**seed_figures(arms),
                             "test_train_subject_overlap": len({s for s, _ in train_q} & {s for s, _ in test_q})}
            print(f"  seed {seed}: " + "; ".join(f"{arm} EM {v['em_single']:.2f}/{v['em_multi']:.2f} "
                                               f"(curve mean {v['em_single_auc']:.2f}/{v['em_multi_auc']:.2f})"
                                               for arm, v in arms.items()), flush=True)
        m = per_seed_metrics(results, eval_every=p.eval_every, grpo_steps=p.steps, reps=p.reps)
        write_json(ctx.path(METRICS), m)
        rows = [{"method": arm, "hops": hops, "em": m["arms"][arm][f"em_{hops}_auc"]}
                for arm in ARMS for hops in ("single", "multi")]
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, (ax, ax2) = new_figure(ncols=2, figsize=(10, 3.5))
        x = np.arange(2)
        for j, arm in enumerate(ARMS):
            v = m["arms"][arm]
            ax.bar(x + (j - 1) * 0.25, [v["em_single_auc"], v["em_multi_auc"]], 0.25, label=arm)
            steps = [h["step"] for h in curves[str(ctx.seeds[0])][arm][0]["heldout"]]
            em = np.mean([[h["em_multi"] for h in r["heldout"]] for s in ctx.seeds for r in curves[str(s)][arm]], 0)
            ax2.plot(steps, em, marker="o", label=arm)
        ax.set(xticks=x, xticklabels=["single-hop", "multi-hop"], ylabel="held-out EM, learning-curve mean",
               ylim=(0, 1.05), title=f"auto_refine: mean over {len(ctx.seeds)} seeds")
        ax2.set(xlabel="GRPO step", ylabel="held-out multi-hop EM", ylim=(0, 1.05), title="learning curves")
        ax.legend(fontsize=7)
        ax2.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT))


if __name__ == "__main__":
    main()
