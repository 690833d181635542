"""auto_refine train: the three arms on the training questions, each SFT warm-up then GRPO.

Arms: ``refine`` (AutoRefine: refine steps, answer reward + retrieval reward), ``refine_noret``
(the ablation: refine steps, answer reward only), ``norefine`` (Search-R1 style: no refine step,
answer reward only), and ``refine_untrained`` (the control: the refine protocol with an untrained
policy). Outputs: data/auto_refine/policies.pt, data/auto_refine/model (the refine arm as an MLflow
pyfunc model) and reports/auto_refine/train.json."""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import KB, MODEL, POLICIES, TRAIN_METRICS

ARMS = {"refine": ("refine", True), "refine_noret": ("refine", False), "norefine": ("norefine", False)}


def main() -> None:
    with stage("auto_refine", "train", PARAMS) as ctx:
        import io
        import json

        import torch
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json

        from .refine import Scorer, build_env, n_features, save_mlflow, train_policy

        limit_threads(1)
        kb = json.loads(ctx.path(KB).read_text())
        docs = [tuple(d) for d in kb["docs"]]
        train_q, test_q = [tuple(q) for q in kb["train"]], [tuple(q) for q in kb["test"]]
        p = ctx.params.train
        env = build_env(docs, p.k, train_q + test_q)
        states, final = {}, {}
        for arm, (proto, ret) in tqdm(ARMS.items(), desc="arms"):
            curve = []
            pol = train_policy(env, train_q, proto, p.retrieval_reward if ret else 0.0, hidden=p.hidden,
                               sft_rounds=p.sft_rounds, steps=p.steps, batch=p.batch, group=p.group, lr=p.lr,
                               clip=p.clip, seed=ctx.seed, log=lambda s, r: curve.append(r))
            ctx.run.log_curve(f"{arm}_train_reward", curve)
            final[arm] = sum(curve[-10:]) / max(len(curve[-10:]), 1)
            states[arm] = pol.state_dict()
            if arm == "refine":
                save_mlflow(ctx.path(MODEL), pol, p.k, p.hidden)
                ctx.run.log_model(ctx.path(MODEL), "policy", params=p.model_dump())
        torch.manual_seed(ctx.seed)
        states["refine_untrained"] = Scorer(n_features(p.k), p.hidden).state_dict()
        buf = io.BytesIO()
        torch.save(states, buf)
        write_bytes(ctx.path(POLICIES), buf.getvalue())
        write_json(ctx.path(TRAIN_METRICS), {"final_train_reward": final})


if __name__ == "__main__":
    main()
