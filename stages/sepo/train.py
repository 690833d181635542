"""sepo train: for every verdict seed (one after another in this process), pre-train the masked
discrete diffusion model on that seed's Markov sequences, then fine-tune it towards the motif
reward with SEPO's released loss (the method of record), the same run on shuffled rewards (the
control), the re-derived variant (a second arm), and reward-weighted fine-tuning (RWFT) at each
temperature (:func:`stages.sepo.runs.run_seed`). Every fine-tuned model's exact (KL to the
pre-trained model, mean reward) comes from its exact output distribution: the SEPO arms' every
``eval_every`` steps (their curves), RWFT's at the end of each temperature (its curve).

Outputs: data/sepo/pretrained and data/sepo/sepo_model (the first verdict seed's pre-trained and
released-SEPO models, MLflow pyfunc folders, logged and registered, each with a sampling request
as its input example), data/sepo/curves.json (every
seed's curves), data/sepo/pretrained_dist.npz (every seed's exact pre-trained distribution) and
reports/sepo/train.json (``per_seed``).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CURVES, DATA, FINETUNED, PRETRAINED, PRETRAINED_DIST, TRAIN_METRICS


def seed_rows(data, seeds) -> dict[int, int]:
    """{seed: its row in the prepared data}; a ValueError when a verdict seed was not prepared."""
    held = [int(s) for s in data["seeds"]]
    missing = [s for s in seeds if s not in held]
    if missing:
        raise ValueError(f"data/sepo/sequences.npz holds seeds {held}, not {missing}: run sepo-prepare")
    return {s: held.index(s) for s in seeds}


def main() -> None:
    with stage("sepo", "train", PARAMS) as ctx:
        import numpy as np
        import pandas as pd

        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .dd import all_sequences, kl, markov_probs, motif_reward, save_model
        from .runs import ARMS, run_seed

        limit_threads()        # one thread: an MLP of 128 units gains nothing from two
        d = np.load(ctx.path(DATA))
        rows = seed_rows(d, ctx.seeds)
        pp, p = ctx.params.prepare, ctx.params.train
        reward = lambda s: motif_reward(s, pp.motif, pp.partial_weight)  # noqa: E731
        r_all = reward(all_sequences(pp.length))

        res = run_seeds(ctx.seeds, lambda s: run_seed(d["x"][rows[s]], pp.length, reward, r_all, p, s,
                                                      progress=True), what="sepo seed")
        figures = {}
        for s, r in res.items():
            p_data = markov_probs(pp.length, d["start"][rows[s]], d["trans"][rows[s]])
            figures[s] = {"pretrain_loss_first": r["pretrain"]["loss_first"],
                          "pretrain_loss_last100_mean": r["pretrain"]["loss_last100_mean"],
                          "kl_data_to_pretrained": kl(p_data, r["p_pre"]),
                          "pretrained_exact_sum": float(r["p_pre"].sum()),
                          **{f"{arm}_final": r["curves"][arm][-1] for arm in ARMS}}
            ctx.run.log_metrics({f"seed{s}_{k}_cpu_s": v for k, v in r["cpu"].items()})   # timings: MLflow only
            ctx.run.log_curve(f"seed{s}.released.exact_reward", [c["reward"] for c in r["curves"]["released"]])

        first = res[ctx.seeds[0]]                 # the registered models: the first verdict seed's
        # their input example: the request evaluate makes of the pre-trained model (its seed, the
        # first verdict seed's x 1000 + 5) and the next seed, a few samples each
        example = pd.DataFrame({"seed": [ctx.seeds[0] * 1000 + 5, ctx.seeds[0] * 1000 + 6], "n": [4, 2]})
        for target, name, m in ((PRETRAINED, "pretrained", first["models"]["pretrained"]),
                                (FINETUNED, "sepo", first["models"]["released"])):
            save_model(ctx.path(target), m, name, example)
            ctx.run.log_model(ctx.path(target), f"sepo-{name}", params={
                "length": pp.length, "seed": ctx.seeds[0], **p.pretrain.model_dump(),
                "exact_mean_reward": first["curves"]["released"][0 if name == "pretrained" else -1]["reward"]})

        write_npz(ctx.path(PRETRAINED_DIST), {"seeds": np.array(ctx.seeds), "r_all": r_all,
                                              "p_pre": np.stack([res[s]["p_pre"] for s in ctx.seeds])})
        write_json(ctx.path(CURVES), {"seeds": list(ctx.seeds), "model_seed": ctx.seeds[0],
                                      "per_seed": {str(s): res[s]["curves"] for s in ctx.seeds}})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(figures))
        cpu = {k: sum(r["cpu"][k] for r in res.values()) for k in first["cpu"]}
        print("  CPU s over the seeds: " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()), flush=True)


if __name__ == "__main__":
    main()
