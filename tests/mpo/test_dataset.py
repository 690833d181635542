"""The constructed datasets' properties (were ledger musts before the contract v2; a property true
by construction is a test of the code): flips hit the chosen share of pairs, nested across rates;
the mixed set's pairs are mostly both poor actions."""
from __future__ import annotations

import numpy as np
import pytest

from stages.mpo import experiment as ex
from stages.mpo import po


@pytest.fixture(scope="module")
def draws():
    from stages.common.runtime.params import load_study
    from stages.mpo.params import PARAMS

    _, prm = load_study("mpo", PARAMS, profile="default")
    p = prm.prepare.model_copy(update={"val_draws": 1, "test_draws": 1, "pairs": 300})
    return p, ex.build_draws(p, ex.build_reference(p, 5), 5)


def test_label_accuracy_is_one_minus_the_flip_rate(draws):
    p, d = draws
    for f in p.flips:
        acc = d[f"flip{f:g}/test0/true"].mean()
        assert acc == pytest.approx(1 - f, abs=4 * np.sqrt(f * (1 - f) / p.pairs) + 1e-9), f
    # nested flips: a pair flipped at a lower rate is flipped at every higher one
    for a, b in zip(p.flips, p.flips[1:]):
        ta, tb = d[f"flip{a:g}/test0/true"], d[f"flip{b:g}/test0/true"]
        assert np.all(tb <= ta)


def test_mixed_set_chosen_actions_are_mostly_poor(draws):
    p, d = draws
    s, w = d["mixed/test0/s"], d["mixed/test0/w"]
    dist = np.abs(po.TORQUES[None, :] - po.expert_torque(s)[:, None])
    rank = dist.argsort(1).argsort(1)[np.arange(len(w)), w]
    poor = (rank >= po.N_ACTIONS // 2).mean()
    clean_w = d["flip0/test0/w"]
    clean_poor = (dist.argsort(1).argsort(1)[np.arange(len(clean_w)), clean_w] >= po.N_ACTIONS // 2).mean()
    assert poor >= p.mixed - 0.1 and poor > clean_poor + 0.3
    assert d["mixed/test0/true"].all()          # the mixed set has clean labels
