"""purpcode's data and policy: the held-out split is disjoint and covers every task; rule learning
keeps only answers its verifier accepts, prefixed with the rule; the transformer's answer
log-probabilities match a step-by-step computation; SFT learns a fixed answer; GRPO with a reward
for refusing drives the refusal probability up (a known optimum)."""
from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest
import torch

from stages.purpcode import codelang as cl
from stages.purpcode import policy as pol
from stages.purpcode.data import rule_set, split_prompts, teacher_answer
from stages.purpcode.oracle import Verdict

TEACHER = NS(refuse=0.03, refuse_security=0.3, buggy=0.15, insecure=0.2, insecure_tempting=0.7,
             mal_refuse=0.6, mal_refuse_security=0.3)
SMALL = {"d_model": 16, "layers": 1, "heads": 2}


def test_split_is_disjoint_and_covers_tasks():
    train, test = split_prompts(np.random.default_rng(0), 0.25)
    assert not set(train) & set(test) and len(train) + len(test) == len(cl.all_prompts())
    assert {p[0] for p in test} == set(cl.BENIGN + cl.MALICIOUS)


def test_teacher_answers_fit_the_model():
    rng = np.random.default_rng(1)
    for p in cl.all_prompts()[::7]:
        a = teacher_answer(p, TEACHER, rng)
        assert a[-1] == "EOS" and len(a) + 1 <= cl.MAX_ANSWER
        assert cl.is_refusal(a[:-1]) or cl.render(a[:-1]) is not None


class FakeOracle:
    """Accepts nothing but refusals (a verdict per answer, no bandit)."""

    def judge(self, prompts, answers):
        return [Verdict(cl.is_malicious(p[0]), a[0] == "REFUSE", a[0] != "REFUSE", False, False, None)
                for p, a in zip(prompts, answers)]


def test_rule_set_keeps_verified_answers_with_their_rule():
    prompts = [("M_KEYLOG", "C_DOCS", "C_CLI"), ("T_CALC", "C_DOCS", "C_CLI")]
    rows, info = rule_set(prompts, TEACHER, FakeOracle(), np.random.default_rng(0), 16, lambda v: v.refused)
    assert [r[1][:2] for r in rows][0] == ["R_MAL", "REFUSE"]
    assert all(r[1][1] == "REFUSE" for r in rows) and info["rule_candidates"] == 32


def test_answer_logp_matches_step_by_step():
    m = pol.make_model(SMALL, 0).eval()
    P = pol.encode_prompts([("T_CALC", "C_DOCS", "C_CLI")])
    A, _ = pol.encode_answers([["I_AST", "DEF", "RET_LITEVAL", "EOS"]])
    with torch.no_grad():
        lp = pol.answer_logp(m, P, A)
    x = P
    for j in range(4):
        with torch.no_grad():
            ref = torch.log_softmax(m(x)[0, -1], -1)[A[0, j]]
        assert float(lp[0, j]) == pytest.approx(float(ref), abs=1e-5)
        x = torch.cat([x, A[:, j:j + 1]], 1)


def test_sample_masks_end_at_eos():
    m = pol.make_model(SMALL, 0)
    ids, mask = pol.sample(m, pol.encode_prompts([("T_CALC", "C_DOCS", "C_CLI")] * 16), torch.Generator().manual_seed(0))
    assert ids.shape == mask.shape == (16, cl.MAX_ANSWER)
    for row, mk in zip(ids, mask):
        n = int(mk.sum())
        assert (row[n:] == cl.PAD).all()
        assert n == cl.MAX_ANSWER or row[n - 1] == cl.EOS


def test_sft_learns_a_fixed_answer():
    m = pol.make_model(SMALL, 0)
    pair = (("T_DIGEST", "C_DOCS", "C_CLI"), cl.SECURE["T_DIGEST"] + ["EOS"])
    losses = pol.sft(m, [pair], 150, 4, 1e-2, torch.Generator().manual_seed(0))
    assert losses[-1] < 0.05 < losses[0]
    assert pol.greedy_answers(m, [pair[0]])[0] == " | " + cl.render(cl.SECURE["T_DIGEST"])


def test_grpo_reaches_the_rewarded_answer():
    """Reward 1 for a refusal, 0 otherwise: the refusal probability must rise towards 1."""
    m = pol.make_model(SMALL, 0)
    prompts = [("T_CALC", "C_DOCS", "C_CLI")]
    P = pol.encode_prompts(prompts * 64)
    first = lambda: float(torch.softmax(m(P[:1])[0, -1], -1)[cl.REFUSE])          # noqa: E731
    before = first()
    p = NS(iterations=40, prompts=1, group=16, epochs=2, lr=3e-2, clip=0.2, kl=0.0, temperature=1.0)
    pol.grpo(m, prompts, FakeOracle(), lambda v: float(v.refused), p, torch.Generator().manual_seed(0))
    assert before < 0.1 and first() > 0.9
