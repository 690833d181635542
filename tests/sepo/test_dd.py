"""sepo's maths against known answers: the exact sampler distribution (sums to 1, matches a hand
computation at L = 2 and sampled means), the Markov chain, the motif reward, best-of-N and the tilt
in closed form, the policy-gradient pieces, and bad inputs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.sepo.dd import (Denoiser, all_sequences, exact_distribution, kl, markov_data, markov_probs, motif_reward,
                            sample, sample_strings, seq_index)
from stages.sepo.policy import (best_of_n, group_advantages, log_concrete_score, matched_gap, ppo_clip_loss,
                                surrogate_loglik, tilt, tilt_frontier)


def _model(length: int, seed: int = 0) -> Denoiser:
    torch.manual_seed(seed)
    m = Denoiser(length, 8, 1)
    with torch.no_grad():
        for prm in m.parameters():
            prm.mul_(4.0)                                  # far from uniform
    return m


def test_exact_distribution_by_hand_at_length_2():
    m = _model(2)
    p = exact_distribution(m)
    M = 4
    with torch.no_grad():
        first = m(torch.tensor([[M, M]])).exp()[0]          # [2, 4]
    want = np.zeros(16)
    for a in range(4):
        for b in range(4):
            with torch.no_grad():
                after0 = m(torch.tensor([[a, M]])).exp()[0, 1, b]      # position 0 first, then 1
                after1 = m(torch.tensor([[M, b]])).exp()[0, 0, a]      # position 1 first, then 0
            want[a * 4 + b] = 0.5 * first[0, a] * after0 + 0.5 * first[1, b] * after1
    assert np.allclose(p, want, atol=1e-7)


def test_exact_distribution_sums_to_one_and_matches_samples():
    m = _model(4, 1)
    p = exact_distribution(m)
    assert p.sum() == pytest.approx(1.0, abs=1e-9) and (p >= 0).all()
    x = sample(m, 40_000, torch.Generator().manual_seed(0)).numpy()
    emp = np.bincount(seq_index(x), minlength=256) / len(x)
    assert 0.5 * np.abs(emp - p).sum() < 0.05                # total variation, 256 cells
    r = motif_reward(all_sequences(4), "TATA", 0.25)
    assert motif_reward(x, "TATA", 0.25).mean() == pytest.approx(p @ r, abs=0.02)


def test_markov_chain_sampled_matches_exact():
    x, start, trans = markov_data(50_000, 3, 0.7, np.random.default_rng(0))
    p = markov_probs(3, start, trans)
    assert p.sum() == pytest.approx(1.0)
    emp = np.bincount(seq_index(x), minlength=64) / len(x)
    assert 0.5 * np.abs(emp - p).sum() < 0.03


def test_motif_reward_by_hand():
    x = np.array([["ACGT".index(c) for c in s] for s in ("TATATA", "AAAAAA", "TTTATA", "CATAGG")])
    assert motif_reward(x, "TATA", 0.25).tolist() == [2 + 1.0, 0 + 0.5, 1 + 1.0, 0 + 0.75]
    with pytest.raises(ValueError, match="longer than the sequences"):
        motif_reward(x[:, :3], "TATA", 0.25)


def test_best_of_n_closed_form_and_sampled():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(6))
    r = np.array([0.0, 1.0, 1.0, 2.0, 0.0, 3.0])
    assert np.allclose(best_of_n(p, r, 1), p)
    q = best_of_n(p, r, 3)
    assert q.sum() == pytest.approx(1.0)
    # P(max reward = 3) = 1 - (1 - p5)^3
    assert q[5] == pytest.approx(1 - (1 - p[5]) ** 3)
    draws = rng.choice(6, size=(200_000, 3), p=p)
    rd = r[draws]
    best = rd.max(1, keepdims=True)
    # ties at random among the maximisers
    u = rng.random(draws.shape) * (rd == best)
    pick = draws[np.arange(len(draws)), u.argmax(1)]
    assert np.allclose(np.bincount(pick, minlength=6) / len(pick), q, atol=4e-3)
    with pytest.raises(ValueError, match="N >= 1"):
        best_of_n(p, r, 0)


def test_tilt_is_the_kl_frontier():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(50))
    r = rng.random(50)
    q = tilt(p, r, 0.3)
    assert q.sum() == pytest.approx(1.0)
    # any other distribution at no more KL has no more reward (random perturbations of q)
    for _ in range(50):
        other = q * np.exp(0.3 * rng.standard_normal(50))
        other /= other.sum()
        if kl(other, p) <= kl(q, p):
            assert other @ r <= q @ r + 1e-12
    assert tilt_frontier(p, r, kl(q, p)) == pytest.approx(q @ r, abs=1e-6)
    assert best_of_n(p, r, 4) @ r <= tilt_frontier(p, r, kl(best_of_n(p, r, 4), p)) + 1e-9


def test_group_advantages_and_bad_split():
    a = group_advantages(np.array([1.0, 3.0, 5.0, 5.0]), 2, per_group=True)
    assert np.allclose(a, [-1, 1, 0, 0])
    b = group_advantages(np.array([1.0, 3.0]), 1, per_group=False)
    assert np.allclose(b, [-1, 1])
    with pytest.raises(ValueError, match="equal groups"):
        group_advantages(np.ones(5), 2, per_group=True)


def test_ppo_clip_loss_by_hand():
    ratio, adv = torch.tensor([1.5, 0.5, 1.1]), torch.tensor([1.0, -1.0, 2.0])
    # min(1.5, 1.2) = 1.2; min(-0.5, -0.8) = -0.8; min(2.2, 2.2) = 2.2
    assert float(ppo_clip_loss(ratio, adv, 0.2)) == pytest.approx(-(1.2 - 0.8 + 2.2) / 3)


def test_concrete_score_is_the_ratio_of_single_mask_conditionals():
    m = _model(3, 2)
    x = torch.tensor([[0, 3, 2]])
    ls = log_concrete_score(m, x)
    assert torch.allclose(ls.gather(-1, x.unsqueeze(-1)), torch.zeros(1, 3, 1))
    with torch.no_grad():
        lp = m(torch.tensor([[0, 4, 2]]))[0, 1]
    assert torch.allclose(ls[0, 1], lp - lp[3], atol=1e-6)
    # ell with self = -log(1 + sum of the 9 neighbour scores)
    want = -torch.log(1 + ls.exp().sum() - 3)
    assert float(surrogate_loglik(m, x).detach()) == pytest.approx(float(want.detach()), abs=1e-5)


def test_matched_gap_interpolates_inside_the_range_only():
    g = matched_gap([0.5, 2.0, 5.0], [1.0, 2.0, 3.0], [0.0, 1.0, 3.0], [0.0, 1.0, 2.0])
    assert g == [(0.5, 1.0, 0.5), (2.0, 2.0, 1.5)]


def test_sample_strings_deterministic_and_checked():
    m = _model(4, 3)
    assert sample_strings(m, 5, 7) == sample_strings(m, 5, 7)
    assert all(set(s) <= set("ACGT") and len(s) == 4 for s in sample_strings(m, 5, 7))
    with pytest.raises(ValueError, match="n must be >= 1"):
        sample_strings(m, 0, 7)


def test_kl_matches_scipy():
    from scipy.stats import entropy

    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(30)), rng.dirichlet(np.ones(30))
    p[:3] = 0
    p /= p.sum()
    assert kl(p, q) == pytest.approx(entropy(p, q), rel=1e-12)
