"""auto_refine train: on every verdict seed, the three arms on that seed's training questions, each
SFT warm-up then GRPO with the same budget, ``reps`` times (replications with their own draws),
and each run's held-out learning curve.

Arms (refine.ARMS): ``refine`` (AutoRefine: refine steps, answer reward + retrieval reward),
``refine_noret`` (the ablation: refine steps, answer reward only) and ``norefine`` (Search-R1
style: the policy writes its own second query from the retrieved text, no refine step, answer
reward only). The seeds run one after another in this process (stages.common.seeds.run_seeds;
benchmarks/auto_refine/seeds.py measures it against one process per seed). Outputs:
data/auto_refine/policies.pt (every seed's arms' scorers, per replication), data/auto_refine/curves.json (per seed,
arm and replication: training reward per GRPO step and the held-out evaluations after every eval_every steps),
data/auto_refine/model (the first seed's AutoRefine scorer as an MLflow pyfunc model; its input example is
the candidates of its first decision on that seed's first test question) and
reports/auto_refine/train.json."""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CURVES, KB, MODEL, POLICIES, TRAIN_METRICS


def main() -> None:
    with stage("auto_refine", "train", PARAMS) as ctx:
        import io
        import json

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .refine import build_env, input_example, save_mlflow, train_arms

        limit_threads(1)
        kb = json.loads(ctx.path(KB).read_text())["seeds"]
        p = ctx.params.train
        first = ctx.seeds[0]
        kept = {}          # the first seed's env and first test question: the model's input example

        def one(seed: int) -> dict:
            d = kb[str(seed)]
            docs = [tuple(x) for x in d["docs"]]
            train_q, test_q = [tuple(q) for q in d["train"]], [tuple(q) for q in d["test"]]
            env = build_env(docs, p.k, train_q + test_q)
            if seed == first:
                kept.update(env=env, question=test_q[0])
            return train_arms(env, train_q, test_q, p, seed)

        results = run_seeds(ctx.seeds, one, "verdict seed")
        policy = results[first]["refine"][0][0]
        save_mlflow(ctx.path(MODEL), policy, p.k, p.hidden, input_example(policy, kept["env"], kept["question"]))
        ctx.run.log_model(ctx.path(MODEL), "policy", params=p.model_dump())
        for arm, runs in results[first].items():
            ctx.run.log_curve(f"{arm}_train_reward_seed{first}_rep0", runs[0][1])
        buf = io.BytesIO()
        torch.save({str(s): {arm: [pol.state_dict() for pol, _, _ in runs] for arm, runs in r.items()}
                    for s, r in results.items()}, buf)
        write_bytes(ctx.path(POLICIES), buf.getvalue())
        write_json(ctx.path(CURVES), {str(s): {arm: [{"train_reward": curve, "heldout": held} for _, curve, held in runs]
                                               for arm, runs in r.items()} for s, r in results.items()})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(
            {s: {"train_reward_last10": {arm: float(np.mean([np.mean(c[-10:]) for _, c, _ in runs]))
                                         for arm, runs in r.items()}} for s, r in results.items()},
            reps=p.reps, grpo_steps=p.steps))

if __name__ == "__main__":
    main()
