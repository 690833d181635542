"""fgbench features on hand cases: signed FG-edit counts and edit sites, class ranks, the text
tokeniser and hashing."""
from __future__ import annotations

import numpy as np
import pytest

from stages.fgbench import features, textmodel


def _rec(t, r, t_diff, r_diff, type_="single_value_regression", tl="1.0", rl="2.0"):
    return {"target_smiles": t, "ref_smiles": r, "target_diff": repr(t_diff), "ref_diff": repr(r_diff),
            "type": type_, "target_label": tl, "ref_label": rl}


def test_edit_features_sign_and_site():
    """phenol -> chlorobenzene: -1 phenol, +1 aryl chloride, both attached to one aromatic atom."""
    rec = _rec("Oc1ccccc1", "Clc1ccccc1", [[["phenol", 1, [[0]]]], []], [[["Aryl chloride", 1, [[0]]]], []])
    vocab = ["Aryl chloride", "phenol"]
    v = features.edit_features(rec, {n: i for i, n in enumerate(vocab)})
    assert v[0] == 1 and v[1] == -1 and v[2] == 0 and v[3] == 0        # no other group, no alkane
    removed, added = v[4:9], v[9:14]                                      # n, size, aromatic, ring, chain
    assert removed.tolist() == [1, 1, 1, 0, 0] and added.tolist() == [1, 1, 1, 0, 0]


def test_alkane_carbons_counted_with_sign():
    rec = _rec("CCCCO", "CCCCCCO", [[], []], [[], [["C2 alkane", 1, [[0, 1]]]]])
    v = features.edit_features(rec, {})
    assert v[1] == 2                                                       # +2 carbons added


def test_known_label_is_the_one_the_question_states():
    fp = features.Fingerprints(2, 64)
    single = _rec("CCO", "CCCO", [[], []], [[], []], tl="1.5", rl="9.0")
    comp = dict(single, type="comparison_value_regression")
    x = features.agnostic([single, comp], fp, {})
    assert x.shape == (2, 129) and x[0, -1] == 1.5 and x[1, -1] == 9.0


def test_class_ranks_and_bad_label():
    ranks = features.class_ranks(["(B) medium", "(A) low", "(C) high", "(A) low"])
    assert ranks == {"(A) low": 0.0, "(B) medium": 1.0, "(C) high": 2.0}
    assert features.label_value("-3.5") == -3.5
    with pytest.raises(ValueError, match="neither a number nor a known class"):
        features.label_value("(D) huge", ranks)


def test_tokens_and_stable_hashing():
    toks = textmodel.tokens("[CH3:0][OH:1] has Cl and -3.25.", 100)
    assert toks[:2] == ["[CH3:0]", "[OH:1]"] and "Cl" in toks and "-3.25" in toks
    a = textmodel.hashed_ids("same text here", 1024, 10)
    assert a == textmodel.hashed_ids("same text here", 1024, 10) and max(a) < 1024
    assert len(a) == 3 + 2                                                 # unigrams + bigrams


def test_text_model_learns_a_separable_toy_and_repeats():
    class P:
        dim, buckets, epochs, batch_size, lr, max_tokens = 8, 512, 30, 8, 0.05, 16
    texts = [f"molecule {w} here" for w in ("up", "down") * 20]
    y = np.array([1.0, 0.0] * 20)
    out, losses = textmodel.fit_predict(texts, y, ["molecule up here", "molecule down here"], "bool", P, 0, False)
    assert out[0] > 0.8 and out[1] < 0.2 and losses[-1] < losses[0]
    again, _ = textmodel.fit_predict(texts, y, ["molecule up here", "molecule down here"], "bool", P, 0, False)
    assert np.array_equal(out, again)
