"""auto_refine's pieces against known cases: the knowledge base and its gold paths, BM25 retrieval on
a hand case, disjoint train/test subjects, AutoRefine's reward, the features, the protocols (both
policies write their own second query with the same template; the errors), the learning-curve
figures."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.auto_refine import refine as R


def test_kb_gold_facts_and_answer_path_by_hand():
    docs = [("p0", "works", "p1"), ("p0", "lives", "c0"), ("p0", "born", "c1"),
            ("p1", "works", "p0"), ("p1", "lives", "c2"), ("p1", "born", "c3"), ("p0", "likes", "p1")]
    fact = R.facts(docs)
    assert R.answer_path(fact, "p0", ("lives",)) == ([("p0", "lives", "c0")], "c0")
    assert R.answer_path(fact, "p0", ("works", "born")) == ([("p0", "works", "p1"), ("p1", "born", "c3")], "c3")
    kb = R.make_kb(10, 3, 2, np.random.default_rng(0))
    assert len(kb) == 10 * 3 + 10 * 2
    assert all(s != o for s, r, o in kb if r == "works")          # nobody is their own boss


def test_bm25_ranks_the_matching_document_first():
    docs = [("p1", "lives", "c3"), ("p2", "works", "p1"), ("p1", "born", "c4"), ("p5", "lives", "c1")]
    ids = R.Retriever(docs, 2).search(["p1 lives", "p2 works"])
    assert ids[0, 0] == 0 and ids[1, 0] == 1


def test_split_has_disjoint_subjects_and_every_type():
    train, test = R.split_questions(20, 0.25, np.random.default_rng(1))
    assert not {s for s, _ in train} & {s for s, _ in test}
    assert len(test) == 5 * len(R.QTYPES) and len(train) == 15 * len(R.QTYPES)


def test_autorefine_reward_by_hand():
    docs = [("p0", "works", "p1"), ("p1", "lives", "c2"), ("p0", "lives", "c0"),
            ("p1", "works", "p0"), ("p0", "born", "c1"), ("p1", "born", "c3")]
    env = R.Env(docs, 2, {}, {}, R.facts(docs))
    q = [("p0", 2)] * 3                       # p0 -works-> p1 -lives-> c2
    r = R.rewards(env, q, ["c2", "c0", "c0"], [[0, 1], [0, 1], [0, 2]], 0.1)
    assert r.tolist() == pytest.approx([1.0, 0.1, 0.0])
    assert R.rewards(env, q, ["c2", "c0", "c0"], [[0, 1], [0, 1], [0, 2]], 0.0).tolist() == [1.0, 0.0, 0.0]


def test_features_are_one_hot_blocks():
    f = R.features(5, 2, 1, "lives", 3, 2, True, False, True)
    assert f.shape == (R.n_features(5),) and f.sum() == 5
    assert f[2] == 1 and f[5 + 1] == 1 and f[5 + 2] == 1 and f[5 + 4] == 1


def test_rollout_runs_both_protocols_and_rejects_others():
    rng = np.random.default_rng(0)
    docs = R.make_kb(12, 4, 2, rng)
    train, test = R.split_questions(12, 0.25, rng)
    env = R.build_env(docs, 3, train + test)
    pol = R.Scorer(R.n_features(3), 8)
    for proto, n_search in (("refine", 1.5), ("norefine", 1.5)):
        ans, ref, searches, dec = R.rollout(pol, env, test, proto, True, None)
        assert len(ans) == len(test) and np.mean([len(s) for s in searches]) == n_search
        assert R.episode_logp(pol, dec, len(test)).shape == (len(test),)
    with pytest.raises(ValueError, match="protocol must be 'refine' or 'norefine'"):
        R.rollout(pol, env, test, "think", True, None)
    with pytest.raises(ValueError, match="need n_people >= 4"):
        R.make_kb(2, 4, 0, rng)


def test_scorer_masks_padding():
    pol = R.Scorer(4, 3)
    logp = pol(torch.randn(2, 3, 4), torch.tensor([[True, True, False], [True, False, False]]))
    assert torch.allclose(logp.exp().sum(-1), torch.ones(2))
    assert logp[1, 0].item() == pytest.approx(0.0, abs=1e-6) and logp[0, 2].exp().item() < 1e-30


def test_policy_round_trips_through_the_pyfunc_model(tmp_path):
    import mlflow.pyfunc
    import pandas as pd

    torch.manual_seed(0)
    env, test = _hop2_env()
    pol = R.Scorer(R.n_features(env.k), 4)
    example = R.input_example(pol, env, test[0])          # one real decision's candidates
    assert len(example) == env.k and list(example.columns[:2]) == ["decision", "f0"]
    R.save_mlflow(tmp_path / "m", pol, env.k, 4, example)
    model = mlflow.pyfunc.load_model(str(tmp_path / "m"))
    assert model.metadata.signature.inputs.input_names() == list(example.columns)
    assert np.sum(model.predict(example)) == pytest.approx(1.0)
    x = torch.rand(2, 3, R.n_features(env.k))
    want = pol(x, torch.ones(2, 3, dtype=torch.bool)).exp().reshape(-1)
    df = pd.DataFrame(x.reshape(6, -1).numpy(), columns=[f"f{i}" for i in range(R.n_features(env.k))])   # float32
    df["decision"] = [0, 0, 0, 1, 1, 1]
    np.testing.assert_allclose(model.predict(df), want.detach().numpy(), atol=1e-6)
    with pytest.raises(Exception, match="missing inputs \\['decision'\\]"):       # the signature's schema check
        model.predict(df.drop(columns=["decision"]))


def _hop2_env():
    """A small knowledge base, its BM25 env and its two-hop test questions."""
    rng = np.random.default_rng(3)
    docs = R.make_kb(16, 4, 3, rng)
    train, test = R.split_questions(16, 0.25, rng)
    env = R.build_env(docs, 4, train + test)
    return env, [q for q in test if len(R.QTYPES[q[1]]) == 2]


@pytest.mark.parametrize("protocol", ["refine", "norefine"])
def test_the_second_query_is_the_policys_choice_with_one_template(protocol):
    """Both protocols' second search is BM25 of "<entity> <last relation>", the entity chosen by the
    policy among the entities it holds: for Search-R1 all k retrieved documents, for AutoRefine the
    kept document. Two differently initialised policies write different queries (it is not fixed)."""
    env, q2 = _hop2_env()
    written = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        pol = R.Scorer(R.n_features(env.k), 8)
        ans, ref, searches, _ = R.rollout(pol, env, q2, protocol, True, None)
        queries = []
        for (s, t), ss, kept in zip(q2, searches, ref):
            rel = R.QTYPES[t][1]
            held = [env.docs[kept[0]]] if protocol == "refine" else [env.docs[i] for i in ss[0]]
            ents = [e for d in held for e in (d[0], d[2])]
            match = [e for e in ents if list(env.by_fact[f"{e} {rel}"]) == list(ss[1])]
            assert match, (protocol, s, t)
            queries.append(tuple(ss[1]))
        written.append(queries)
    assert written[0] != written[1]


def test_norefine_answers_from_all_retrieved_text_refine_from_the_kept_documents():
    env, q2 = _hop2_env()
    torch.manual_seed(0)
    pol = R.Scorer(R.n_features(env.k), 8)
    for protocol in ("refine", "norefine"):
        ans, ref, searches, _ = R.rollout(pol, env, q2, protocol, True, None)
        for a, kept, ss in zip(ans, ref, searches):
            pool = kept if protocol == "refine" else [i for s in ss for i in s]
            assert a in {e for i in pool for e in (env.docs[i][0], env.docs[i][2])}
            assert len(kept) == (2 if protocol == "refine" else 0)


def test_learning_curve_figures_by_hand():
    held = [{"em_multi": 0.25}, {"em_multi": 0.75}, {"em_multi": 1.0}]
    assert R.auc(held, "em_multi") == pytest.approx(2.0 / 3.0)
    arms = {"refine": {"em_multi": 1.0, "em_single": 1.0, "em_multi_auc": 0.7, "em_single_auc": 0.9, "search_quality_auc": 0.8},
            "refine_noret": {"em_multi": 0.9, "em_single": 1.0, "em_multi_auc": 0.6, "em_single_auc": 0.9, "search_quality_auc": 0.8},
            "norefine": {"em_multi": 0.8, "em_single": 1.0, "em_multi_auc": 0.5, "em_single_auc": 0.95, "search_quality_auc": 0.7}}
    c = R.seed_figures(arms)["claim"]
    assert c["multi_gain"] == pytest.approx(0.2) and c["multi_gain_auc"] == pytest.approx(0.2)
    assert c["gain_multi_minus_single_auc"] == pytest.approx(0.2 - (-0.05))
    assert c["retrieval_reward_gain_auc"] == pytest.approx(0.1) and c["ablation_multi_gain_auc"] == pytest.approx(0.1)
    assert c["search_quality_gain_auc"] == pytest.approx(0.1)


def test_training_to_a_solvable_task_beats_the_untrained_policy_and_checkpoints_are_free():
    """GRPO learns (held-out multi-hop EM rises well above the untrained policy's), and the
    held-out checkpoints draw nothing from training: the weights are the same with or without them."""
    rng = np.random.default_rng(5)
    docs = R.make_kb(24, 4, 2, rng)
    train, test = R.split_questions(24, 0.25, rng)
    env = R.build_env(docs, 3, train + test)
    kw = dict(hidden=16, sft_rounds=3, steps=60, batch=8, group=4, lr=0.01, clip=0.2, seed=7)
    held = []
    pol = R.train_policy(env, train, "refine", 0.1, checkpoint=lambda s, p: held.append(
        {"step": s, **R.evaluate_policy(p, env, test, "refine")}), every=20, **kw)
    plain = R.train_policy(env, train, "refine", 0.1, **kw)
    assert [h["step"] for h in held] == [20, 40, 60]
    assert all(torch.equal(a, b) for a, b in zip(pol.state_dict().values(), plain.state_dict().values()))
    torch.manual_seed(7)
    untrained = R.evaluate_policy(R.Scorer(R.n_features(3), 16), env, test, "refine")["em_multi"]
    assert held[-1]["em_multi"] >= untrained + 0.3
