"""AutoRefine's mechanism at toy scale: a generated knowledge base, real BM25 retrieval (bm25s), a
tiny policy that makes the agent's discrete choices, and the two protocols.

Knowledge base: people p0..p{P-1} and cities c0..c{C-1}; each person has three facts, written as
short documents ("p3 works for p7", "p3 lives in c2", "p3 born in c5"), plus distractor documents
that share the words ("p3 likes p9", "p3 visited c4"). Questions name a subject and a relation
path: one hop (``lives`` / ``born``) or two hops (``works`` then ``lives`` / ``born``); the answer is
a city.

Protocols (fixed; the policy chooses among candidates, scored by :class:`Scorer`). In both, the
policy writes its own second query (two-hop questions): it chooses one entity of the text it holds
and the query is that entity + the question's last relation word (the same template).
- ``refine`` (AutoRefine): <search> the question -> top-k docs -> <refine> keep one doc -> (2-hop)
  <search> the query entity chosen among the kept document's entities -> top-k -> <refine> keep
  one -> <answer> one entity of the refined knowledge (the kept docs).
- ``norefine`` (Search-R1 style): <search> the question -> top-k -> (2-hop) <search> the query
  entity chosen among all k retrieved documents' entities -> top-k -> <answer> one entity of all
  retrieved text (both searches' 2k documents). No refine step: nothing is filtered before the
  query or the answer, and there is no refined knowledge for a retrieval reward to read (Search-R1
  trains on answer correctness only).

The two protocols differ only by AutoRefine's contribution: keeping a refined subset of the
evidence, from which the next query and the answer are chosen, and the retrieval reward that
reads it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

RELS = ("works", "lives", "born", "likes", "visited")
PHRASE = {"works": "works for", "lives": "lives in", "born": "born in", "likes": "likes", "visited": "visited"}
QTYPES = (("lives",), ("born",), ("works", "lives"), ("works", "born"))
STEPS = ("refine1", "refine2", "answer", "query")


def make_kb(n_people: int, n_cities: int, n_distractors: int, rng: np.random.Generator):
    """Documents as (subject, relation, object) triples; gold facts first, then distractors."""
    if n_people < 4 or n_cities < 2:
        raise ValueError(f"need n_people >= 4 and n_cities >= 2, got {n_people}, {n_cities}")
    docs = []
    for i in range(n_people):
        boss = int(rng.integers(n_people - 1))
        boss += boss >= i
        docs += [(f"p{i}", "works", f"p{boss}"), (f"p{i}", "lives", f"c{rng.integers(n_cities)}"),
                 (f"p{i}", "born", f"c{rng.integers(n_cities)}")]
    for i in range(n_people):
        for _ in range(n_distractors):
            if rng.random() < 0.5:
                docs.append((f"p{i}", "likes", f"p{rng.integers(n_people)}"))
            else:
                docs.append((f"p{i}", "visited", f"c{rng.integers(n_cities)}"))
    return docs


def doc_text(d) -> str:
    return f"{d[0]} {PHRASE[d[1]]} {d[2]}"


def facts(docs) -> dict:
    return {(s, r): o for s, r, o in docs if r in ("works", "lives", "born")}


def answer_path(fact, subject: str, qtype) -> list:
    """The gold documents along the question's path and the answer: ([(s, r, o), ...], answer)."""
    path, e = [], subject
    for r in qtype:
        o = fact[(e, r)]
        path.append((e, r, o))
        e = o
    return path, e


def question_text(subject: str, qtype) -> str:
    return " ".join([subject, *qtype])


class Retriever:
    """BM25 (bm25s) over the documents' text; ``search`` returns top-k document indices per query."""

    def __init__(self, docs, k: int):
        import bm25s

        self.docs, self.k = docs, k
        self.bm25 = bm25s.BM25()
        self.bm25.index(bm25s.tokenize([doc_text(d) for d in docs], stopwords=None, show_progress=False),
                        show_progress=False)
        self._tok = bm25s.tokenize

    def search(self, queries: list[str]) -> np.ndarray:
        ids, _ = self.bm25.retrieve(self._tok(queries, stopwords=None, show_progress=False), k=self.k,
                                    show_progress=False, n_threads=1)
        return np.asarray(ids)


N_FEAT_BASE = 5     # source search (2), subject == question subject, subject == query entity, entity is object


def n_features(k: int) -> int:
    return k + N_FEAT_BASE + len(RELS) * len(QTYPES) * len(STEPS)


def features(k: int, rank: int, search: int, rel: str, qt: int, step: int, subj_is_q: bool,
             subj_is_query: bool, is_object: bool) -> np.ndarray:
    """One candidate's features: its retrieval rank, which search found it, its relation crossed with
    the question type and the decision step, and two entity matches."""
    f = np.zeros(n_features(k), np.float32)
    f[rank] = 1
    f[k + search] = 1
    f[k + 2], f[k + 3], f[k + 4] = subj_is_q, subj_is_query, is_object
    f[k + N_FEAT_BASE + (RELS.index(rel) * len(QTYPES) + qt) * len(STEPS) + step] = 1
    return f


class Scorer(torch.nn.Module):
    """The tiny policy: an MLP scores each candidate; softmax over a decision's candidates."""

    def __init__(self, n_in: int, hidden: int):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1))

    def forward(self, feats: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """feats (batch x candidates x features), mask (batch x candidates) -> log-probabilities."""
        s = self.net(feats).squeeze(-1).masked_fill(~mask, -1e9)
        return torch.log_softmax(s, -1)


@dataclass
class Env:
    """Everything an episode needs: the documents, the retrieval caches, the gold facts."""
    docs: list
    k: int
    first: dict        # question text -> top-k ids (first search, both protocols)
    by_fact: dict      # "entity relation" query -> top-k ids (the second search, both protocols)
    fact: dict


def build_env(docs, k: int, questions) -> Env:
    """Runs every BM25 search the protocols can issue, batched, once."""
    r = Retriever(docs, k)
    qs = sorted({question_text(s, QTYPES[t]) for s, t in questions})
    first = dict(zip(qs, r.search(qs)))
    ents = sorted({d[2] for d in docs} | {d[0] for d in docs})
    fq = [f"{e} {rel}" for e in ents for rel in ("lives", "born")]
    by_fact = dict(zip(fq, r.search(fq)))
    return Env(docs, k, first, by_fact, facts(docs))


def _pad(rows: list[np.ndarray], n_feat: int):
    m = max(len(r) for r in rows)
    x = np.zeros((len(rows), m, n_feat), np.float32)
    mask = np.zeros((len(rows), m), bool)
    for i, r in enumerate(rows):
        x[i, :len(r)], mask[i, :len(r)] = r, True
    return torch.from_numpy(x), torch.from_numpy(mask)


def _doc_cands(env: Env, ids, search: int, qt: int, step: int, subj: str, query_ent: str):
    return [features(env.k, r, search, env.docs[i][1], qt, step, env.docs[i][0] == subj,
                     env.docs[i][0] == query_ent, False) for r, i in enumerate(ids)]


def _answer_cands(env: Env, kept, qt: int, subj: str, query_ent: str):
    """Entities of the given (rank, search, doc id) list: each doc's subject and object."""
    feats, ents = [], []
    for rank, search, i in kept:
        s, rel, o = env.docs[i]
        for ent, is_obj in ((s, False), (o, True)):
            feats.append(features(env.k, rank, search, rel, qt, 2, s == subj, s == query_ent, is_obj))
            ents.append(ent)
    return feats, ents


def _query_cands(env: Env, pool, qt: int, subj: str):
    """The second query's entity, chosen by the policy in both protocols: one entity (subject or
    object) of the documents in ``pool``, i.e. of all retrieved text (Search-R1) or of the refined
    knowledge (AutoRefine); featurised as an answer candidate is, at the decision step ``query``."""
    feats, ents = [], []
    for rank, search, i in pool:
        s, rel, o = env.docs[i]
        for ent, is_obj in ((s, False), (o, True)):
            feats.append(features(env.k, rank, search, rel, qt, 3, s == subj, s == subj, is_obj))
            ents.append(ent)
    return feats, ents


def rollout(policy: Scorer, env: Env, questions, protocol: str, greedy: bool, gen: torch.Generator | None):
    """Runs a batch of episodes (one policy forward per decision step for the whole batch).

    Returns per episode: the answer, the refined knowledge (doc ids), the searches made, and the
    decisions as (features, mask, chosen) per step for the policy-gradient recomputation."""
    n = len(questions)
    nf = n_features(env.k)
    qtexts = [question_text(s, QTYPES[t]) for s, t in questions]
    hops = [len(QTYPES[t]) for _, t in questions]
    searches = [[env.first[q]] for q in qtexts]
    kept = [[] for _ in range(n)]
    decisions = []

    def choose(rows, active):
        x, mask = _pad([rows[i] for i in active], nf)
        with torch.no_grad():
            logp = policy(x, mask)
        a = logp.argmax(-1) if greedy else torch.multinomial(logp.exp(), 1, generator=gen).squeeze(-1)
        decisions.append((x, mask, a, torch.tensor(active)))
        return dict(zip(active, a.tolist()))

    query_ent = {}
    if protocol == "refine":
        rows = {i: _doc_cands(env, searches[i][0], 0, questions[i][1], 0, questions[i][0], questions[i][0])
                for i in range(n)}
        pick = choose(rows, list(range(n)))
        for i in range(n):
            kept[i].append((pick[i], 0, int(searches[i][0][pick[i]])))
        two = [i for i in range(n) if hops[i] == 2]
        if two:
            rows, qents = {}, {}       # the policy writes its second query from its refined knowledge
            for i in two:
                rows[i], qents[i] = _query_cands(env, kept[i][:1], questions[i][1], questions[i][0])
            pick = choose(rows, two)
            rows = {}
            for i in two:
                query_ent[i] = qents[i][pick[i]]
                ids = env.by_fact[f"{query_ent[i]} {QTYPES[questions[i][1]][1]}"]
                searches[i].append(ids)
                rows[i] = _doc_cands(env, ids, 1, questions[i][1], 1, questions[i][0], query_ent[i])
            pick = choose(rows, two)
            for i in two:
                kept[i].append((pick[i], 1, int(searches[i][1][pick[i]])))
        pool = kept
    elif protocol == "norefine":
        two = [i for i in range(n) if hops[i] == 2]
        if two:                       # the policy writes its own second query from the retrieved text
            rows, qents = {}, {}
            for i in two:
                first_pool = [(r, 0, int(d)) for r, d in enumerate(searches[i][0])]
                rows[i], qents[i] = _query_cands(env, first_pool, questions[i][1], questions[i][0])
            pick = choose(rows, two)
            for i in two:
                query_ent[i] = qents[i][pick[i]]
                searches[i].append(env.by_fact[f"{query_ent[i]} {QTYPES[questions[i][1]][1]}"])
        pool = [[(r, s, int(d)) for s, ids in enumerate(searches[i]) for r, d in enumerate(ids)] for i in range(n)]
    else:
        raise ValueError(f"protocol must be 'refine' or 'norefine', got {protocol!r}")
    rows, ents = {}, {}
    for i in range(n):
        q_ent = questions[i][0] if hops[i] == 1 else query_ent[i]
        rows[i], ents[i] = _answer_cands(env, pool[i], questions[i][1], questions[i][0], q_ent)
    pick = choose(rows, list(range(n)))
    answers = [ents[i][pick[i]] for i in range(n)]
    refined = [[d for _, _, d in kept[i]] for i in range(n)]
    return answers, refined, searches, decisions


def episode_logp(policy: Scorer, decisions, n: int) -> torch.Tensor:
    """Sum over each episode's decisions of log pi(choice), with gradient."""
    total = torch.zeros(n)
    for x, mask, a, active in decisions:
        lp = policy(x, mask).gather(1, a[:, None]).squeeze(1)
        total = total.index_add(0, active, lp)
    return total


def rewards(env: Env, questions, answers, refined, retrieval_reward: float) -> np.ndarray:
    """AutoRefine's reward: 1 for an exact-match answer; otherwise ``retrieval_reward`` when the gold
    answer appears in the refined knowledge (0 turns the retrieval reward off)."""
    out = np.zeros(len(questions), np.float32)
    for i, ((s, t), a) in enumerate(zip(questions, answers)):
        gold = answer_path(env.fact, s, QTYPES[t])[1]
        if a == gold:
            out[i] = 1.0
        elif retrieval_reward and any(gold in env.docs[d] for d in refined[i]):
            out[i] = retrieval_reward
    return out


def search_quality(env: Env, questions, searches) -> float:
    """Share of searches whose top-k holds the gold document of their hop."""
    hit = tot = 0
    for (s, t), ss in zip(questions, searches):
        path, _ = answer_path(env.fact, s, QTYPES[t])
        for h, ids in enumerate(ss):
            tot += 1
            hit += path[min(h, len(path) - 1)] in [env.docs[i] for i in ids]
    return hit / max(tot, 1)


def train_policy(env: Env, train_q, protocol: str, retrieval_reward: float, *, hidden: int, sft_rounds: int,
                 steps: int, batch: int, group: int, lr: float, clip: float, seed: int, log=None,
                 checkpoint=None, every: int = 0) -> Scorer:
    """SFT warm-up on the policy's own successful samples (rejection sampling), then GRPO with the
    shared group advantages and clipped surrogate (stages.common.pg). ``checkpoint(step, policy)``
    is called after every ``every``-th GRPO step (a held-out learning curve; it draws nothing from
    the training generators, so the run is the same with or without it)."""
    from stages.common.optim import Adam
    from stages.common.pg import clipped_surrogate, group_advantages

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    policy = Scorer(n_features(env.k), hidden)
    opt = Adam(policy.parameters(), lr=lr)
    for _ in range(sft_rounds):       # warm-up: keep the correct ones among 4 samples per question
        qs = [train_q[j] for j in rng.choice(len(train_q), batch)] * 4
        ans, ref, _, dec = rollout(policy, env, qs, protocol, False, gen)
        ok = torch.from_numpy(rewards(env, qs, ans, ref, 0.0) == 1.0)
        if ok.any():
            loss = -(episode_logp(policy, dec, len(qs))[ok]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    for step in range(steps):
        qs = [train_q[j] for j in rng.choice(len(train_q), batch) for _ in range(group)]
        ans, ref, _, dec = rollout(policy, env, qs, protocol, False, gen)
        r = torch.from_numpy(rewards(env, qs, ans, ref, retrieval_reward))
        adv = group_advantages(r, torch.arange(batch).repeat_interleave(group))
        logp = episode_logp(policy, dec, len(qs))
        loss = clipped_surrogate(logp, logp.detach(), adv, clip)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if log is not None:
            log(step, float(r.mean()))
        if checkpoint is not None and every and (step + 1) % every == 0:
            checkpoint(step + 1, policy)
    return policy


def evaluate_policy(policy: Scorer, env: Env, test_q, protocol: str) -> dict:
    """Greedy EM on single-hop and multi-hop test questions, searches per question, search quality."""
    ans, ref, searches, _ = rollout(policy, env, test_q, protocol, True, None)
    em = rewards(env, test_q, ans, ref, 0.0)
    multi = np.array([len(QTYPES[t]) == 2 for _, t in test_q])
    return {"em_single": float(em[~multi].mean()), "em_multi": float(em[multi].mean()),
            "searches_per_question": float(np.mean([len(s) for s in searches])),
            "search_quality": search_quality(env, test_q, searches),
            "answer_in_refined": float(rewards(env, test_q, ans, ref, 0.5).clip(0, 0.5).mean() * 2)
            if protocol == "refine" else None}


def split_questions(n_people: int, test_frac: float, rng: np.random.Generator):
    """Train and test questions over disjoint subjects (every question type for each subject)."""
    perm = rng.permutation(n_people)
    n_test = max(1, int(round(test_frac * n_people)))
    test_s, train_s = sorted(perm[:n_test].tolist()), sorted(perm[n_test:].tolist())
    return ([(f"p{i}", t) for i in train_s for t in range(len(QTYPES))],
            [(f"p{i}", t) for i in test_s for t in range(len(QTYPES))])


def input_example(policy: Scorer, env: Env, question):
    """The pyfunc's input for one real decision: the candidates of the first decision ``policy`` makes
    on ``question`` (refine protocol: the documents of its first search), as the DataFrame
    pyfunc.py takes (``decision`` 0, then ``f0``..; features as float64, which also admits float32)."""
    import pandas as pd

    decisions = rollout(policy, env, [question], "refine", True, None)[3]
    x, mask = decisions[0][0][0], decisions[0][1][0]
    feats = x[mask].numpy().astype(np.float64)
    df = pd.DataFrame(feats, columns=[f"f{i}" for i in range(feats.shape[1])])
    df.insert(0, "decision", np.zeros(len(df), np.int64))
    return df


def save_mlflow(target, policy: Scorer, k: int, hidden: int, example) -> None:
    """Write the scorer as an MLflow pyfunc model folder at ``target`` (atomically): ``weights.pt``
    (a state dict), ``config.json`` (sizes) and ``pyfunc.py`` (models from code), with ``example``
    (:func:`input_example`) as its input example, from which MLflow infers its signature."""
    import json
    import tempfile
    from pathlib import Path

    from stages.common.mlmodel import save_pyfunc

    with tempfile.TemporaryDirectory() as scratch:
        weights, config = Path(scratch) / "weights.pt", Path(scratch) / "config.json"
        torch.save(policy.state_dict(), weights)
        config.write_text(json.dumps({"k": k, "hidden": hidden, "n_features": n_features(k)}, sort_keys=True, indent=1))
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights, "config": config},
                    input_example=example)


def load_weights(weights: str, config: str) -> Scorer:
    """The scorer that :func:`save_mlflow` wrote (weights loaded with weights_only)."""
    import json

    cfg = json.loads(open(config).read())
    if cfg["n_features"] != n_features(cfg["k"]):
        raise ValueError(f"{config}: the model has {cfg['n_features']} features, this code makes {n_features(cfg['k'])}")
    pol = Scorer(cfg["n_features"], cfg["hidden"])
    pol.load_state_dict(torch.load(weights, weights_only=True))
    return pol.eval()


# the trained arms: (protocol, retrieval reward on); every arm gets the same SFT + GRPO budget
ARMS = {"refine": ("refine", True), "refine_noret": ("refine", False), "norefine": ("norefine", False)}


def make_data(n_people: int, n_cities: int, n_distractors: int, test_frac: float, seed: int):
    """One verdict (or calibration) seed's knowledge base and its train / test questions, drawn from
    the seed's own stream ([seed, 0]): (docs, train questions, test questions)."""
    rng = np.random.default_rng([seed, 0])
    docs = make_kb(n_people, n_cities, n_distractors, rng)
    train_q, test_q = split_questions(n_people, test_frac, rng)
    return docs, train_q, test_q


def rep_seed(seed: int, rep: int) -> int:
    """The training seed of replication ``rep`` within a verdict seed: its own stream ([seed, 1, rep])."""
    return int(np.random.SeedSequence([seed, 1, rep]).generate_state(1)[0])


def train_arms(env: Env, train_q, test_q, p, seed: int, arms=tuple(ARMS)) -> dict:
    """Every arm of ``arms`` trained ``p.reps`` times on one seed's knowledge base (replication r
    draws from rep_seed(seed, r); within a replication every arm has the same initialisation and
    the same SFT + GRPO budget, ``p`` a TrainStep), with its held-out learning curve (evaluate_policy
    on ``test_q`` after every ``p.eval_every`` GRPO steps):
    {arm: [(policy, training-reward curve, held-out curve) per replication]}."""
    out: dict = {arm: [] for arm in arms}
    for rep in range(p.reps):
        for arm in arms:
            proto, ret = ARMS[arm]
            curve: list = []
            held: list = []
            pol = train_policy(env, train_q, proto, p.retrieval_reward if ret else 0.0, hidden=p.hidden,
                               sft_rounds=p.sft_rounds, steps=p.steps, batch=p.batch, group=p.group, lr=p.lr,
                               clip=p.clip, seed=rep_seed(seed, rep), log=lambda s, r: curve.append(r),
                               checkpoint=lambda s, pol, proto=proto, held=held: held.append(
                                   {"step": s, **evaluate_policy(pol, env, test_q, proto)}),
                               every=p.eval_every)
            out[arm].append((pol, curve, held))
    return out


def auc(held: list, key: str) -> float:
    """The mean of a held-out figure over the learning curve's checkpoints (equal budgets 1 .. n)."""
    return float(np.mean([h[key] for h in held]))


def seed_figures(arms: dict) -> dict:
    """One seed's figures from its arms' held-out evaluations: ``arms`` maps each arm to its final
    evaluate_policy figures plus the means over the learning curve (``*_auc``)."""
    a, b, n = arms["refine"], arms["refine_noret"], arms["norefine"]
    return {"arms": arms,
            "claim": {"multi_gain": a["em_multi"] - n["em_multi"],
                      "multi_gain_auc": a["em_multi_auc"] - n["em_multi_auc"],
                      "single_gain_auc": a["em_single_auc"] - n["em_single_auc"],
                      "gain_multi_minus_single_auc": (a["em_multi_auc"] - n["em_multi_auc"])
                      - (a["em_single_auc"] - n["em_single_auc"]),
                      "retrieval_reward_gain": a["em_multi"] - b["em_multi"],
                      "retrieval_reward_gain_auc": a["em_multi_auc"] - b["em_multi_auc"],
                      "ablation_multi_gain_auc": b["em_multi_auc"] - n["em_multi_auc"],
                      "search_quality_gain_auc": a["search_quality_auc"] - n["search_quality_auc"]}}


def arm_figures(policies: list, env: Env, test_q, arm: str, helds: list, train_curves: list,
                window: int = 10) -> dict:
    """One arm's figures on one seed, each the mean over the seed's replications: the final policy's
    held-out evaluation, the means over the held-out learning curve (``em_single_auc``,
    ``em_multi_auc``, ``search_quality_auc``) and the final training reward (mean of the last
    ``window`` GRPO steps)."""
    per = []
    for policy, held, curve in zip(policies, helds, train_curves):
        f = evaluate_policy(policy, env, test_q, ARMS[arm][0])
        for key in ("em_single", "em_multi", "search_quality"):
            f[f"{key}_auc"] = auc(held, key) if held else f[key]
        f["final_train_reward"] = float(np.mean(curve[-window:])) if curve else None
        per.append(f)
    return {k: (None if per[0][k] is None else float(np.mean([f[k] for f in per]))) for k in per[0]}
