"""CFR+ baseline (OpenSpiel's C++ solver), the random EFG generator, and the rate fit."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stages.efg_altpg import randgame
from stages.efg_altpg.baseline import cfr_plus, checkpoints
from stages.efg_altpg.evaluate import rate_metrics
from stages.efg_altpg.seqform import build


def test_cfr_plus_kuhn_matches_facts():
    """FACTS.md: CFR+ 100 iterations on Kuhn -> exploitability 0.0012 (average policy)."""
    import pyspiel

    out = cfr_plus(pyspiel.load_game("kuhn_poker"), 100, 10)
    assert out["iters"][0] == 1 and out["iters"][-1] == 100
    assert out["average"][-1] == pytest.approx(0.0012, abs=5e-5)
    assert out["average"][0] == pytest.approx(0.458333, abs=1e-6)   # first iterate = uniform


def test_checkpoints_log_spaced():
    c = checkpoints(1000, 10)
    assert c[0] == 1 and c[-1] == 1000 and c == sorted(set(c)) and len(c) <= 11


def test_random_game_perfect_recall_zero_sum(tmp_path):
    """The drawn game loads in OpenSpiel, is zero-sum, has perfect recall (build checks it),
    and the same seed gives the same file."""
    import pyspiel

    a = randgame.write_game(tmp_path / "a.efg", 11, 3, 4, 2, 0.2)
    b = randgame.write_game(tmp_path / "b.efg", 11, 3, 4, 2, 0.2)
    assert a.read_text() == b.read_text()
    game = randgame.load(a)
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    sf = build(game)
    assert len(sf.t_util) > 9 and np.all(np.abs(sf.t_util) <= 1.0)
    assert sf.t_chance.max() == pytest.approx(1 / 9)


def test_random_game_bad_size_refused():
    with pytest.raises(ValueError, match="signals in"):
        randgame.efg_text(np.random.default_rng(0), 9, 3, 2, 0.0, "x")
    with pytest.raises(ValueError, match=r"depth in \[2, 8\]"):     # player 2 could never act
        randgame.efg_text(np.random.default_rng(0), 3, 1, 2, 0.0, "x")


def test_random_game_where_player_2_never_acts_is_drawn_again():
    """stop_prob 0.9, depth 2: most public trees end at every first move. The first draw of
    the seeds below is such a tree (checked here), yet the written game gives both players
    information sets."""
    found = 0
    for seed in range(40):
        hists = randgame.public_tree(np.random.default_rng(seed), 2, 2, 0.9)
        if any(len(h) == 2 for h in hists):
            continue
        found += 1
        text = randgame.efg_text(np.random.default_rng(seed), 2, 2, 2, 0.9, "x")
        assert ' 2 1 "' in text and ' 1 1 "' in text, seed          # an infoset of each player
    assert found >= 3


def _rate(table, eps):
    return {"epsilons": eps, "tau_over_epsilon": 0.5,
            "variants": {"npg": {"step": 1.0, "iterations": table}}}


def test_rate_fit_power_law_vs_exponential():
    """Rounds = C / eps^1.5 (times seed noise): slope 1.5, curvature ratio 1; rounds =
    exp(c / eps) bends upward: the curvature ratio is far above 2 (the check's threshold)."""
    eps = [0.16, 0.08, 0.04, 0.02, 0.01]
    rng = np.random.default_rng(0)
    power = [[int(round(3 * e ** -1.5 * f)) for e in eps] for f in rng.uniform(0.9, 1.1, 4)]
    m = rate_metrics(_rate(power, eps), 0.95)["npg"]
    assert m["slope"] == pytest.approx(1.5, abs=0.02)
    assert m["curvature_ratio"] == pytest.approx(1.0, abs=0.05)
    assert m["slope_ci_low"] < 1.5 < m["slope_ci_high"]
    expo = [[int(round(math.exp(0.05 / e) * f)) for e in eps] for f in (1.0, 1.1, 0.95)]
    assert rate_metrics(_rate(expo, eps), 0.95)["npg"]["curvature_ratio"] > 3


def test_rate_fit_counts_misses():
    eps = [0.16, 0.08, 0.04]
    m = rate_metrics(_rate([[5, 20, None], [6, 25, 90], [4, 18, 70]], eps), 0.95)
    assert m["npg"]["misses"] == 1 and m["npg"]["starts_complete"] == 2 and m["misses"] == 1
