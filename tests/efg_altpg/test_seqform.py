"""The sequence form built from OpenSpiel's tree against OpenSpiel itself and against hand
computations: values, exploitability (= NashConv / 2), reach, perfect recall."""
from __future__ import annotations

import numpy as np
import pytest

from stages.efg_altpg.prepare import check_game, random_policies
from stages.efg_altpg.seqform import SequenceForm, build, openspiel_exploitability, to_tabular_policy

MATCHING_PENNIES = """EFG 2 R "matching pennies, sequential with hidden move" { "P1" "P2" }
""
p "" 1 1 "p1" { "H" "T" } 0
  p "" 2 1 "p2" { "h" "t" } 0
    t "" 1 "HH" { 1.0, -1.0 }
    t "" 2 "HT" { -1.0, 1.0 }
  p "" 2 1 "p2" { "h" "t" } 0
    t "" 3 "TH" { -1.0, 1.0 }
    t "" 4 "TT" { 1.0, -1.0 }
"""

# player 1 moves twice and forgets its first move at the second: imperfect recall
FORGETFUL = """EFG 2 R "forgetful" { "P1" "P2" }
""
p "" 1 1 "a" { "L" "R" } 0
  p "" 2 1 "b" { "l" "r" } 0
    p "" 1 2 "c" { "x" "y" } 0
      t "" 1 "o1" { 1.0, -1.0 }
      t "" 2 "o2" { -1.0, 1.0 }
    t "" 3 "o3" { 0.0, 0.0 }
  p "" 2 1 "b" { "l" "r" } 0
    p "" 1 2 "c" { "x" "y" } 0
      t "" 4 "o4" { -1.0, 1.0 }
      t "" 5 "o5" { 1.0, -1.0 }
    t "" 6 "o6" { 0.0, 0.0 }
"""


def _efg(tmp_path, text):
    import pyspiel

    path = tmp_path / "game.efg"
    path.write_text(text)
    return pyspiel.load_game("efg_game", {"filename": str(path)})


@pytest.mark.parametrize("name,expected", [("kuhn", 0.458333), ("leduc", 2.373611)])
def test_uniform_matches_openspiel_and_facts(name, expected, request):
    """Uniform play: our value = expected_game_score.policy_value, our exploitability =
    exploitability.exploitability = the figure in FACTS.md; random policies agree too."""
    game, sf = request.getfixturevalue(name)
    rep = check_game(game, sf, np.random.default_rng(0), n_random=3)
    assert rep["uniform_value"] == pytest.approx(rep["uniform_value_openspiel"], abs=1e-12)
    assert rep["uniform_exploitability"] == pytest.approx(expected, abs=1e-6)
    assert rep["uniform_exploitability_openspiel"] == pytest.approx(expected, abs=1e-6)
    assert rep["max_abs_diff"] < 1e-12


def test_kuhn_sizes_and_value(kuhn):
    """Kuhn: 6 infosets and 13 sequences a player, 30 terminals; uniform play is worth 1/8 to
    player 0 (known closed form); the payoff matrix sums chance-weighted utilities."""
    _, sf = kuhn
    assert [t.n_inf for t in sf.trees] == [6, 6] and [t.n_seq for t in sf.trees] == [13, 13]
    assert len(sf.t_util) == 30
    assert sf.value(*(t.uniform() for t in sf.trees)) == pytest.approx(0.125, abs=1e-12)
    assert sf.A.sum() == pytest.approx(float((sf.t_chance * sf.t_util).sum()), abs=1e-12)
    assert sf.t_chance.sum() == pytest.approx(6 * 1 / 6 * 5, abs=1e-12)  # 5 betting lines per deal


def test_matching_pennies_by_hand(tmp_path):
    """Hand computation: uniform play has value 0 and exploitability 0; P1 always H against a
    uniform P2: P1 gains nothing by deviating, P2 gains 1, so exploitability (0 + 1) / 2."""
    game = _efg(tmp_path, MATCHING_PENNIES)
    sf = build(game)
    uni = tuple(t.uniform() for t in sf.trees)
    assert sf.value(*uni) == pytest.approx(0.0) and sf.exploitability(*uni) == pytest.approx(0.0)
    pure = uni[0].copy()
    t0 = sf.trees[0]
    pure[t0.start[0]:t0.start[0] + 2] = [1.0, 0.0] if t0.actions[1] == 0 else [0.0, 1.0]
    assert sf.exploitability(pure, uni[1]) == pytest.approx(0.5)
    assert openspiel_exploitability(game, sf, (pure, uni[1])) == pytest.approx(0.5)


def test_imperfect_recall_is_refused(tmp_path):
    game = _efg(tmp_path, FORGETFUL)
    with pytest.raises(ValueError, match="not perfect recall"):
        build(game)


def test_reach_and_behavioural_round_trip(leduc):
    """x = reach(pi) satisfies the treeplex constraints; behavioural(x) gives pi back."""
    _, sf = leduc
    (pi0, _), = random_policies(sf, np.random.default_rng(1), 1)
    t = sf.trees[0]
    x = t.reach(pi0)
    assert x[0] == 1.0
    # each infoset's sequences sum to its parent sequence
    np.testing.assert_allclose(t.block_sum(x), x[t.parent], atol=1e-14)
    np.testing.assert_allclose(t.behavioural(x), pi0, atol=1e-12)


def test_best_response_is_a_maximum(kuhn):
    """The backward-induction best-response value beats every pure strategy's value (and
    equals the best of them: a best response can be pure)."""
    _, sf = kuhn
    y = sf.trees[1].reach(sf.trees[1].uniform())
    g = sf.A @ y
    t = sf.trees[0]
    best = t.best_response_value(g)
    import itertools

    values = []
    for choice in itertools.product(*[range(n) for n in t.nact]):
        pi = np.zeros(t.n_seq)
        pi[0] = 1.0
        for i, c in enumerate(choice):
            pi[t.start[i] + c] = 1.0
        values.append(t.reach(pi) @ g)
    assert best == pytest.approx(max(values), abs=1e-12)


def test_save_load_round_trip(kuhn, tmp_path):
    _, sf = kuhn
    sf.save(tmp_path / "k.npz")
    back = SequenceForm.load(tmp_path / "k.npz")
    assert (back.A != sf.A).nnz == 0
    assert list(back.trees[1].keys) == list(sf.trees[1].keys)


def test_tabular_policy_rows_are_filled_not_left_uniform(kuhn):
    """Every infoset row is zeroed then filled: a deterministic policy stays deterministic."""
    game, sf = kuhn
    pis = []
    for t in sf.trees:
        pi = np.zeros(t.n_seq)
        pi[0] = 1.0
        pi[t.start] = 1.0            # first action everywhere
        pis.append(pi)
    tab = to_tabular_policy(game, sf, tuple(pis))
    arr = tab.action_probability_array
    assert np.all(np.isin(arr, [0.0, 1.0])) and np.allclose(arr.sum(axis=1), 1.0)
