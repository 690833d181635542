"""The batched learners against a literal, unbatched transcription of the official code
(proposal.py / Ghosh_algo.py / utils.py), and the properties the batching relies on."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import entr, softmax

from stages.linear_cmdp import agents as ag
from stages.linear_cmdp.cmdp import policy_values


def ref_compute_Q_h(Q_nh, pol_nh, bonus_h, rew_h, P_h, ent_coef, thresh):
    """utils.compute_Q_h, line by line."""
    V_nh = (pol_nh * (Q_nh + ent_coef * entr(pol_nh))).sum(axis=1)
    next_v = np.clip(bonus_h + P_h @ V_nh, 0, thresh)
    return rew_h + next_v


def ref_softmax_pol(kind, P, bonus, r, u, mu, lam, c):
    """proposal.compute_softmax_pol (kind 'opse') or Ghosh_algo.compute_softmax_pol_Ghosh."""
    H, S, A, _ = P.shape
    rQ, dQ, uQ = (np.zeros((H + 1, S, A)) for _ in range(3))
    pol = np.ones((H + 1, S, A)) / A
    for h in range(H - 1, -1, -1):
        if kind == "opse":
            rQ[h] = ref_compute_Q_h(rQ[h + 1], pol[h + 1], c.c_r * bonus[h], r[h], P[h], c.kappa,
                                    (1 + c.kappa * np.log(A)) * (H - h))
            dQ[h] = ref_compute_Q_h(dQ[h + 1], pol[h + 1], c.c_d * bonus[h], c.b_d * bonus[h], P[h], 0, c.b_d * (H - h))
            uQ[h] = ref_compute_Q_h(uQ[h + 1], pol[h + 1], -c.c_u * bonus[h], u[h], P[h], 0, H - h)
            pol[h] = softmax((rQ[h] + dQ[h] + lam * uQ[h]) / c.kappa, axis=-1)
        else:
            rQ[h] = ref_compute_Q_h(rQ[h + 1], pol[h + 1], c.c_r * bonus[h], r[h], P[h], 0, H - h)
            uQ[h] = ref_compute_Q_h(uQ[h + 1], pol[h + 1], c.c_u * bonus[h], u[h], P[h], 0, H - h)
            pol[h] = softmax((rQ[h] + lam * uQ[h]) / c.kappa, axis=-1)
    return mu @ (uQ * pol).sum(-1)[0], pol[:-1]


def ref_bisection(kind, P, bonus, r, u, mu, thr, c):
    lo, hi = 0.0, c.lam_max
    for _ in range(c.bisection_steps):
        mid = (lo + hi) / 2
        util, _ = ref_softmax_pol(kind, P, bonus, r, u, mu, mid, c)
        lo, hi = (lo, mid) if util >= thr else (mid, hi)
    util, pol = ref_softmax_pol(kind, P, bonus, r, u, mu, hi, c)
    return pol, util, hi


CONFIGS = [ag.AgentConfig("opse", c_r=1.0, c_u=2.0, c_d=1.0, b_d=1.0, kappa=0.1),
           ag.AgentConfig("ghosh", c_r=1.0, c_u=1.0, kappa=0.1),
           ag.AgentConfig("opse", c_r=5.0, c_u=5.0, c_d=5.0, b_d=1.0, kappa=0.01)]


def _random_model(seed, B=3, H=4, S=5, A=3):
    rng = np.random.default_rng(seed)
    # a least-squares kernel is not a distribution: entries may be negative, rows need not sum to 1
    P = rng.dirichlet(np.ones(S), size=(B, H, S, A)) * rng.uniform(0.6, 1.0, size=(B, H, S, A, 1))
    P[..., 0] -= 0.05
    bonus = rng.uniform(0.05, 1.0, size=(B, H, S, A))
    RU = (rng.random((B, 2, H, S, A)) < 0.4).astype(float)
    mu = np.eye(S)[rng.integers(S, size=B)]
    return P, bonus, RU, mu


def test_softmax_pass_equals_official_transcription():
    P, bonus, RU, mu = _random_model(0)
    cfg = ag._Coefficients(CONFIGS, 4, 3)
    lam = np.array([[0.0, 0.7, 13.0], [0.3, 2.0, 150.0], [1.0, 5.0, 299.0]])
    util, pols = ag._EpisodeModel(P, bonus, RU, mu, cfg).softmax_pass(lam)
    for b, c in enumerate(CONFIGS):
        for g in range(3):
            ru, rp = ref_softmax_pol(c.kind, P[b], bonus[b], RU[b, 0], RU[b, 1], mu[b], lam[b, g], c)
            assert util[b, g] == pytest.approx(ru, abs=1e-10)
            np.testing.assert_allclose(pols[b, g], rp, atol=1e-10)


@pytest.mark.parametrize("m", [1, 2, 3, 5])
def test_grid_passes_replay_plain_bisection_exactly(m):
    P, bonus, RU, mu = _random_model(1)
    cfg = ag._Coefficients(CONFIGS, 4, 3)
    thr = np.array([0.5, 1.0, 0.8])
    pol, util, lam = ag._plan(P, bonus, RU, mu, thr, cfg, m)
    for b, c in enumerate(CONFIGS):
        rp, ru, rl = ref_bisection(c.kind, P[b], bonus[b], RU[b, 0], RU[b, 1], mu[b], thr[b], c)
        assert lam[b] == rl
        assert util[b] == pytest.approx(ru, abs=1e-10)
        np.testing.assert_allclose(pol[b], rp, atol=1e-10)


def test_tabular_features_give_counts(tab_instance):
    m, _ = tab_instance
    feats = ag._Features([m], m.H, m.S, m.A)
    rng = np.random.default_rng(0)
    counts = np.zeros((m.H, m.S * m.A, m.S))
    for _ in range(30):
        sa = rng.integers(m.S * m.A, size=(1, m.H))
        nxt = rng.integers(m.S, size=(1, m.H))
        counts[np.arange(m.H), sa[0], nxt[0]] += 1
        bonus, P_hat = feats.update(sa, nxt)
    n = counts.sum(-1)
    np.testing.assert_allclose(bonus[0].reshape(m.H, -1), 1 / np.sqrt(1 + n), atol=1e-12)
    np.testing.assert_allclose(P_hat[0].reshape(m.H, m.S * m.A, m.S), counts / (1 + n[..., None]), atol=1e-12)


def test_linear_features_sherman_morrison_equals_ridge(lin_instance):
    m, _ = lin_instance
    feats = ag._Features([m], m.H, m.S, m.A)
    rng = np.random.default_rng(1)
    Lam = np.broadcast_to(np.eye(m.d), (m.H, m.d, m.d)).copy()
    ephi = np.zeros((m.H, m.S, m.d))
    for _ in range(40):
        sa = rng.integers(m.S * m.A, size=(1, m.H))
        nxt = rng.integers(m.S, size=(1, m.H))
        f = m.phi[sa[0]]
        Lam += f[:, :, None] * f[:, None, :]
        ephi[np.arange(m.H), nxt[0]] += f
        bonus, P_hat = feats.update(sa, nxt)
    Linv = np.linalg.inv(Lam)
    want_b = np.sqrt(np.einsum("kd,hde,ke->hk", m.phi, Linv, m.phi))
    want_P = np.einsum("kd,hde,hse->hks", m.phi, Linv, ephi)
    np.testing.assert_allclose(bonus[0].reshape(m.H, -1), want_b, atol=1e-10)
    np.testing.assert_allclose(P_hat[0].reshape(m.H, m.S * m.A, m.S), want_P, atol=1e-10)


def test_a_run_does_not_depend_on_its_batch(tab_instance, lin_instance):
    (t, _), (lin, _) = tab_instance, lin_instance
    alone = ag.run_batch([t], CONFIGS[:1], 40, [[7, 1]])
    both = ag.run_batch([lin, t], [CONFIGS[1], CONFIGS[0]], 40, [[7, 2], [7, 1]])
    for k in alone:
        np.testing.assert_allclose(both[k][1], alone[k][0], atol=1e-12)


def test_huge_pessimism_always_deploys_the_safe_policy(tab_instance):
    m, _ = tab_instance
    out = ag.run_batch([m], [ag.AgentConfig("opse", c_r=1, c_u=100, c_d=1)], 30, [0])
    assert out["safe"].min() == 1.0
    v_safe = policy_values(m.P, m.safe_policy, np.stack([m.r, m.u]), m.mu)
    np.testing.assert_allclose(out["V_u"][0], v_safe[1])


def test_first_episode_plays_the_safe_policy_and_ghosh_violates(lin_instance):
    m, _ = lin_instance
    out = ag.run_batch([m, m], [CONFIGS[0], CONFIGS[1]], 60, [0, 1])
    assert out["safe"][:, 0].tolist() == [1.0, 1.0]
    assert (out["V_u"][1] < m.threshold - 1e-9).sum() > 0          # the optimistic baseline violates
    assert out["safe"][1, 1:].max() == 0.0                          # and never falls back


def test_batch_inputs_are_checked(tab_instance):
    m, _ = tab_instance
    with pytest.raises(ValueError, match="one entry per run"):
        ag.run_batch([m], CONFIGS[:2], 5, [0])
    with pytest.raises(ValueError, match="agent kind"):
        ag.run_batch([m], [ag.AgentConfig("dope", 1, 1)], 5, [0])
