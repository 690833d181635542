"""purpcode train: the five code models, each a tiny transformer trained from scratch here.

* ``base``: SFT on the mixed-quality completions (the SFT base);
* ``rule``: ``base`` + rule learning (SFT on PurpCode's verified, rule-prefixed answers);
* ``verified_sft``: ``base`` + SFT on the same verified answers without their rule token (does
  naming the rule matter, or only the verified data?);
* ``purpcode``: ``rule`` + GRPO with the multi-objective reward (bandit-clean, unit tests pass,
  refuse only malicious requests);
* ``safety_only``: the ablation: ``base`` + rule learning on the safety-only verifier's answers +
  GRPO with the safety-only reward (no utility or over-refusal objective anywhere);
* ``utility_only``: the control of the security claim: ``base`` + GRPO with the security reward
  left out (unit tests pass, refuse only malicious requests).

Every verdict seed (``ctx.seeds``) trains its own six models on its own dataset, one seed after
another in this process (stages.common.seeds.run_seeds), with one bandit/sandbox cache for all.
The rewards call bandit and the sandboxed unit tests for real (cached by snippet text). The
weights go to data/purpcode/models.pt (``{seed: {method: weights}}``); the first seed's PurpCode
model is also saved as an MLflow pyfunc (data/purpcode/model), logged and registered. Metrics:
reports/purpcode/train.json (``per_seed``).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import DATASET, MODEL, MODELS, TRAIN_METRICS

METHODS = ("base", "rule", "verified_sft", "purpcode", "safety_only", "utility_only")


def train_all(dataset: dict, p, seed: int, progress: bool = True, oracle=None) -> tuple[dict, dict, dict]:
    """(models by name, metrics, curves) for train params ``p`` and one seed's dataset
    (``oracle``: a shared bandit/sandbox cache, or a new one)."""
    import copy
    import time

    import torch

    from . import policy as pol
    from .oracle import Oracle, reward

    as_pairs = lambda rows: [(tuple(q), a) for q, a in rows]       # noqa: E731
    train = [tuple(q) for q in dataset["train"]]
    oracle = oracle or Oracle(tuple(dataset["skip"]), dataset["sandbox_timeout"])
    gen = torch.Generator().manual_seed(seed)
    cfg = p.model.model_dump()
    models, metrics, curves, cpu = {}, {}, {}, {}

    def tag(name):
        return f"purpcode: {name}" if progress else None

    t = time.process_time()
    base = pol.make_model(cfg, seed)
    curves["base.loss"] = pol.sft(base, as_pairs(dataset["base"]), p.base.steps, p.base.batch, p.base.lr, gen, tag("base SFT"))
    models["base"] = base
    cpu["base"] = time.process_time() - t
    sets = {"rule": as_pairs(dataset["rule"]), "safety_rule": as_pairs(dataset["safety_rule"]),
            "verified_sft": [(q, a[1:]) for q, a in as_pairs(dataset["rule"])]}     # the rule token dropped
    for name in ("rule", "verified_sft", "safety_rule"):
        t = time.process_time()
        m = copy.deepcopy(base)
        curves[f"{name}.loss"] = pol.sft(m, sets[name], p.rule.steps, p.rule.batch, p.rule.lr, gen, tag(f"{name} SFT"))
        models[name] = m
        cpu[name] = time.process_time() - t
    for name, start, kind in (("purpcode", "rule", "multi"), ("safety_only", "safety_rule", "safety"),
                              ("utility_only", "base", "utility")):
        t = time.process_time()
        m = copy.deepcopy(models[start])
        hist = pol.grpo(m, train, oracle, lambda v, kind=kind: reward(v, kind), p.rl, gen, tag(f"{name} GRPO"))
        for key in ("reward", "refusal", "insecure"):
            curves[f"{name}.{key}"] = [h[key] for h in hist]
        metrics[f"{name}.reward_first"] = hist[0]["reward"]
        metrics[f"{name}.reward_last"] = sum(h["reward"] for h in hist[-5:]) / len(hist[-5:])
        models[name] = m
        cpu[name] = time.process_time() - t
    del models["safety_rule"]        # an intermediate of the ablation, not evaluated on its own
    for key in ("base", "rule", "verified_sft", "safety_rule"):
        metrics[f"{key}.loss_last"] = sum(curves[f"{key}.loss"][-10:]) / len(curves[f"{key}.loss"][-10:])
    return models, metrics, {"curves": curves, "cpu": cpu, "oracle_calls": (oracle.bandit_calls, oracle.sandbox_calls)}


def main() -> None:
    with stage("purpcode", "train", PARAMS) as ctx:
        import io
        import json

        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json

        from .policy import save_mlflow, state_bytes

        limit_threads(1)              # tiny transformer: a second thread only adds overhead
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .oracle import Oracle

        datasets = json.loads(ctx.path(DATASET).read_text())["seeds"]
        missing = [s for s in ctx.seeds if str(s) not in datasets]
        if missing:
            fail(f"dataset.json has no data for seeds {missing}: run purpcode-prepare with these seeds")
        p = ctx.params.train
        first = datasets[str(ctx.seeds[0])]
        oracle = Oracle(tuple(first["skip"]), first["sandbox_timeout"])
        out = run_seeds(ctx.seeds, lambda s: train_all(datasets[str(s)], p, s, oracle=oracle), "train seed")
        buf = io.BytesIO()
        torch.save({str(s): {k: state_bytes(m) for k, m in models.items()} for s, (models, _, _) in out.items()}, buf)
        write_bytes(ctx.path(MODELS), buf.getvalue())
        for s, (_, _, extra) in out.items():
            for key, values in extra["curves"].items():
                ctx.run.log_curve(f"train.seed{s}.{key}", values)
        models0 = out[ctx.seeds[0]][0]
        held_out = first["test"]          # two benign and one malicious held-out prompt of the first seed
        save_mlflow(ctx.path(MODEL), models0["purpcode"], held_out[:2] + held_out[-1:])
        ctx.run.log_model(ctx.path(MODEL), "coder", params={**p.model.model_dump(), "rl_iterations": p.rl.iterations,
                                                               "seed": ctx.seeds[0]})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics({s: m for s, (_, m, _) in out.items()},
                                                             bandit_snippets=len(oracle.findings),
                                                             sandbox_snippets=len(oracle.tests)))
        for s, (_, metrics, extra) in out.items():
            ctx.run.log_metrics({f"cpu_s.seed{s}.{k}": v for k, v in extra["cpu"].items()})     # timings: MLflow only
            print(f"  seed {s} CPU s: " + ", ".join(f"{k} {v:.1f}" for k, v in extra["cpu"].items())
                  + "; GRPO reward "
                  + ", ".join(f"{k} {metrics[k + '.reward_first']:.2f} -> {metrics[k + '.reward_last']:.2f}"
                              for k in ("purpcode", "safety_only", "utility_only")), flush=True)
        print(f"  bandit/sandbox calls {oracle.bandit_calls}/{oracle.sandbox_calls}", flush=True)


if __name__ == "__main__":
    main()
