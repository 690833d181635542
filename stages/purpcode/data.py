"""purpcode's data: the held-out split of prompts, the mixed-quality completions the base model is
fine-tuned on, and the rule-learning set (oracle-verified answers that first name their rule).

The mixed-quality "teacher" stands in for the web and model-written code a base model has seen:
on a benign task it refuses now and then (more often when the prompt looks security-related),
writes a buggy variant (a missing import, a wrong return), and otherwise picks the insecure API
with a probability that a tempting context raises; it complies with a share of malicious requests
(more of them under a security-flavoured, "authorised" context).
"""
from __future__ import annotations

from . import codelang as cl


def split_prompts(rng, test_frac: float) -> tuple[list[tuple], list[tuple]]:
    """Hold out, for every task, a random ``test_frac`` of its context pairs: the test prompts are
    (task, ctx, ctx) combinations never seen in training (each token is seen, the combination is
    not)."""
    prompts = cl.all_prompts()
    by_task: dict[str, list[tuple]] = {}
    for p in prompts:
        by_task.setdefault(p[0], []).append(p)
    train, test = [], []
    for task in cl.BENIGN + cl.MALICIOUS:
        ps = by_task[task]
        order = rng.permutation(len(ps))
        k = max(1, int(round(test_frac * len(ps))))
        test += [ps[i] for i in sorted(order[:k])]
        train += [ps[i] for i in sorted(order[k:])]
    if set(train) & set(test):
        raise AssertionError("train and test prompts overlap")
    return train, test


def corrupt(answer: list[str], rng) -> list[str]:
    """A buggy variant of a reference answer: drop its imports, or return the input unchanged, or
    return None."""
    k = answer.index("DEF")
    kind = int(rng.integers(3))
    if kind == 0 and k > 0:
        return answer[k:]
    if kind == 1:
        return answer[:k + 1] + ["RET_X"]
    return answer[:k + 1] + ["RET_NONE"]


def teacher_answer(prompt: tuple, t, rng) -> list[str]:
    """One mixed-quality completion (code tokens or REFUSE, then EOS; no rule token) of ``prompt``;
    ``t`` holds the teacher's probabilities (params.prepare.teacher)."""
    task = prompt[0]
    if cl.is_malicious(task):
        p_ref = t.mal_refuse_security if cl.looks_security(prompt) else t.mal_refuse
        return (["REFUSE"] if rng.random() < p_ref else list(cl.COMPLY_MALICIOUS)) + ["EOS"]
    p_ref = t.refuse_security if cl.looks_security(prompt) else t.refuse
    if rng.random() < p_ref:
        return ["REFUSE", "EOS"]
    p_ins = t.insecure_tempting if cl.is_tempting(prompt) else t.insecure
    ans = list(cl.INSECURE[task] if rng.random() < p_ins else cl.SECURE[task])
    if rng.random() < t.buggy:
        ans = corrupt(ans, rng)
    return ans + ["EOS"]


def sft_set(prompts: list[tuple], per_prompt: int, t, rng) -> list[tuple[tuple, list[str]]]:
    return [(p, teacher_answer(p, t, rng)) for p in prompts for _ in range(per_prompt)]


def rule_set(prompts: list[tuple], t, oracle, rng, tries: int, accept) -> tuple[list[tuple[tuple, list[str]]], dict]:
    """Rule learning's data: for each prompt, teacher answers drawn until ``accept(verdict)`` takes
    one, at most ``tries`` (PurpCode's verifier: benign, bandit-clean code whose unit tests pass;
    malicious, a refusal; the safety-only ablation's: anything bandit does not flag); the kept
    answer is prefixed with the prompt's rule token (its bandit test id, or R_MAL)."""
    cands = [[teacher_answer(p, t, rng) for _ in range(tries)] for p in prompts]
    flat_p = [p for p, cs in zip(prompts, cands) for _ in cs]
    flat_a = [a for cs in cands for a in cs]
    verdicts = oracle.judge(flat_p, flat_a)
    out, i, dropped = [], 0, 0
    for p, cs in zip(prompts, cands):
        vs = verdicts[i:i + len(cs)]
        i += len(cs)
        ok = [a for a, v in zip(cs, vs) if accept(v)]
        if not ok:
            dropped += 1
            continue
        rule = "R_MAL" if cl.is_malicious(p[0]) else cl.RULE_OF[p[0]]
        out.append((p, [rule] + ok[0]))
    return out, {"rule_prompts": len(prompts), "rule_kept": len(out), "rule_dropped": dropped,
                 "rule_candidates": len(flat_a)}
