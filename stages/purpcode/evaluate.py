"""purpcode evaluate: every model answers every held-out prompt (``evaluate.samples`` sampled
answers each); bandit lints the code and the sandbox runs its unit tests; the rates the claims
read, per method, and the comparison plot.

Every verdict seed (``ctx.seeds``) evaluates its own models on its own held-out prompts.

Outputs: reports/purpcode/metrics.json (what claims.yaml checks; ``per_seed`` beside the mean over
the seeds, stages.common.seeds.per_seed_metrics), reports/purpcode/results.csv
(one row per method, mean over the seeds), reports/purpcode/safety_utility.png and its data
reports/purpcode/safety_utility.csv.
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import DATASET, METRICS, MODELS, PLOT, PLOT_DATA, RESULTS

RATES = ("insecure_rate", "pass_rate", "overrefusal", "malicious_refusal")
LABELS = {"insecure_rate": "insecure code (bandit)", "pass_rate": "unit tests pass",
          "overrefusal": "over-refusal (benign)", "malicious_refusal": "refusal (malicious)"}


def evaluate_models(models: dict, test: list[tuple], oracle, samples: int, temperature: float, seed: int) -> dict:
    """{method: rates (stages/purpcode/oracle.rates)} over ``samples`` answers a held-out prompt."""
    import torch

    from . import policy as pol
    from .oracle import rates

    prompts = [q for q in test for _ in range(samples)]
    ids = pol.encode_prompts(prompts)
    out = {}
    for name, model in models.items():
        gen = torch.Generator().manual_seed(seed)            # the same draws for every method
        A, M = pol.sample(model, ids, gen, temperature)
        out[name] = rates(prompts, oracle.judge(prompts, pol.decode_answers(A, M)))
    return out


def claim_figures(r: dict) -> dict:
    """The differences the claims check (see claims.yaml)."""
    b = r["base"]
    return {
        "insecure_drop": b["insecure_rate"] - r["purpcode"]["insecure_rate"],
        "utility_delta": r["purpcode"]["pass_rate"] - b["pass_rate"],
        "overrefusal_delta": r["purpcode"]["overrefusal"] - b["overrefusal"],
        "malicious_refusal_gain": r["purpcode"]["malicious_refusal"] - b["malicious_refusal"],
        "rule_insecure_drop": b["insecure_rate"] - r["rule"]["insecure_rate"],
        "verified_sft_insecure_drop": b["insecure_rate"] - r["verified_sft"]["insecure_rate"],
        "rule_token_insecure_gain": r["verified_sft"]["insecure_rate"] - r["rule"]["insecure_rate"],
        "safety_only_overrefusal_delta": r["safety_only"]["overrefusal"] - b["overrefusal"],
        "safety_only_utility_delta": r["safety_only"]["pass_rate"] - b["pass_rate"],
        "utility_only_insecure_drop": b["insecure_rate"] - r["utility_only"]["insecure_rate"],
    }


def main() -> None:
    with stage("purpcode", "evaluate", PARAMS) as ctx:
        import io
        import json

        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from .oracle import Oracle
        from .policy import load_bytes

        limit_threads(1)
        from stages.common.seeds import per_seed_metrics, run_seeds

        datasets = json.loads(ctx.path(DATASET).read_text())["seeds"]
        blobs = torch.load(io.BytesIO(ctx.path(MODELS).read_bytes()), weights_only=True)
        missing = [s for s in ctx.seeds if str(s) not in datasets or str(s) not in blobs]
        if missing:
            fail(f"no data or models for seeds {missing}: run purpcode-prepare and purpcode-train with these seeds")
        e = ctx.params.evaluate
        first = datasets[str(ctx.seeds[0])]
        oracle = Oracle(tuple(first["skip"]), first["sandbox_timeout"])

        def one(seed: int) -> dict:
            dataset = datasets[str(seed)]
            models = {k: load_bytes(v) for k, v in blobs[str(seed)].items()}
            test = [tuple(q) for q in dataset["test"]]
            overlap = len(set(test) & {tuple(q) for q in dataset["train"]})
            if overlap:
                fail(f"seed {seed}: {overlap} held-out prompts are also training prompts: rebuild the data")
            r = evaluate_models(models, test, oracle, e.samples, e.temperature, seed + 1000)
            for m, v in r.items():
                print(f"  seed {seed} {m:13s} " + " ".join(f"{k} {v[k]:.3f}" for k in RATES + ("secure_pass_rate",)),
                      flush=True)
            return {"methods": r, "claim": claim_figures(r), "held_out_prompts": len(test),
                    "train_test_overlap": overlap, "answers_per_method": len(test) * e.samples}

        metrics = per_seed_metrics(run_seeds(ctx.seeds, one, "evaluate seed"))
        write_json(ctx.path(METRICS), metrics)
        r = metrics["methods"]
        rows = [{"method": m, **v} for m, v in r.items()]
        write_csv(ctx.path(RESULTS), rows)
        write_csv(ctx.path(PLOT_DATA), [{"metric": LABELS[k], **{m: r[m][k] for m in r}} for k in RATES])
        fig, ax = new_figure(figsize=(8, 3.8))
        w = 0.8 / len(r)
        for i, m in enumerate(r):
            ax.bar([j + i * w for j in range(len(RATES))], [r[m][k] for k in RATES], w, label=m)
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(RATES))], [LABELS[k] for k in RATES], fontsize=8)
        ax.set(ylabel="share of answers (held-out prompts)", ylim=(0, 1.05),
               title=f"purpcode: safety vs utility (mean over seeds {ctx.seeds}, held-out prompts x {e.samples})")
        ax.legend(fontsize=7, ncol=3)
        save_png(fig, ctx.path(PLOT))


if __name__ == "__main__":
    main()
