"""purpcode prepare: the template language's prompts split into training and held-out prompts
(held-out (task, context, context) combinations, checked disjoint), the mixed-quality completions
the base model is fine-tuned on, and the two rule-learning sets: PurpCode's (teacher answers the
verifier accepts: bandit-clean code whose unit tests pass, or a refusal of a malicious request)
and the safety-only ablation's (anything bandit does not flag), each answer prefixed with its rule.
bandit and the sandboxed unit tests run for real here.

Every verdict seed (``ctx.seeds``) draws its own split, teacher answers and rule sets (the whole
experiment is repeated per seed); one bandit/sandbox cache serves all seeds (same snippet, same
verdict).

Outputs: data/purpcode/dataset.json (``{"seeds": {seed: dataset}}``) and
reports/purpcode/prepare.json (sizes, shares; ``per_seed``).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, PREPARE_METRICS


def build(p, seed: int, oracle=None) -> tuple[dict, dict]:
    """The dataset and its summary for prepare params ``p`` and one seed (``oracle``: a shared
    bandit/sandbox cache, or a new one)."""
    import numpy as np

    from . import codelang as cl
    from .data import rule_set, sft_set, split_prompts
    from .oracle import Oracle, reward

    rng = np.random.default_rng([seed, 0])
    train, test = split_prompts(rng, p.test_frac)
    base = sft_set(train, p.per_prompt, p.teacher, rng)
    pool = [q for q in train if cl.is_malicious(q[0]) or cl.is_tempting(q)]
    k = max(1, int(round(p.rule_frac * len(pool))))
    rule_prompts = [pool[i] for i in sorted(rng.permutation(len(pool))[:k])]
    oracle = oracle or Oracle(tuple(p.skip), p.sandbox_timeout)
    rule, rinfo = rule_set(rule_prompts, p.teacher, oracle, rng, p.rule_tries, lambda v: reward(v, "multi") == 1.0)
    safe, sinfo = rule_set(rule_prompts, p.teacher, oracle, rng, p.rule_tries, lambda v: reward(v, "safety") == 1.0)
    verdicts = oracle.judge([q for q, _ in base], [a for _, a in base])
    ben = [v for v in verdicts if not v.malicious]
    summary = {
        "n_train_prompts": len(train), "n_test_prompts": len(test), "overlap": len(set(train) & set(test)),
        "n_base_pairs": len(base), "vocab": len(cl.VOCAB),
        "base_insecure_share": sum(v.insecure for v in ben) / len(ben),
        "base_pass_share": sum(v.passed for v in ben) / len(ben),
        "base_refusal_share": sum(v.refused for v in ben) / len(ben),
        "rule": rinfo, "safety_rule": sinfo,
        "safety_rule_refusals_of_benign": sum(a[1] == "REFUSE" and not cl.is_malicious(q[0]) for q, a in safe)}
    dataset = {"train": [list(q) for q in train], "test": [list(q) for q in test],
               "base": [[list(q), a] for q, a in base], "rule": [[list(q), a] for q, a in rule],
               "safety_rule": [[list(q), a] for q, a in safe], "rules": cl.RULE_TEXT,
               "skip": list(p.skip), "sandbox_timeout": p.sandbox_timeout}
    return dataset, summary


def main() -> None:
    with stage("purpcode", "prepare", PARAMS) as ctx:
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .oracle import Oracle

        p = ctx.params.prepare
        oracle = Oracle(tuple(p.skip), p.sandbox_timeout)
        out = run_seeds(ctx.seeds, lambda s: build(p, s, oracle), "prepare seed")
        write_json(ctx.path(DATASET), {"seeds": {str(s): d for s, (d, _) in out.items()}})
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics({s: m for s, (_, m) in out.items()},
                                                               bandit_snippets=len(oracle.findings)))
        summary = out[ctx.seeds[0]][1]
        print(f"  seed {ctx.seeds[0]}: {summary['n_train_prompts']} training / {summary['n_test_prompts']} held-out prompts "
              f"(overlap {summary['overlap']}); base set {summary['n_base_pairs']} pairs, insecure "
              f"{summary['base_insecure_share']:.2f}; rule sets {summary['rule']['rule_kept']} (PurpCode) / "
              f"{summary['safety_rule']['rule_kept']} (safety-only)", flush=True)


if __name__ == "__main__":
    main()
