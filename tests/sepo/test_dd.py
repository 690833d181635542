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


# ---- the released loss (ozekri/SEPO _compute_loss_sepo and its helpers), against the formulas

def test_released_advantages_standardise_each_column_across_groups():
    from stages.sepo.policy import released_advantages

    r = np.array([1.0, 10.0, 3.0, 10.0, 5.0, 40.0])          # groups of 2: [[1, 10], [3, 10], [5, 40]]
    a = released_advantages(r, 3).reshape(3, 2)
    assert np.allclose(a[:, 0], [-1, 0, 1], atol=1e-6)        # column 1, 3, 5: mean 3, unbiased sd 2
    assert np.allclose(a[:, 1], (np.array([10, 10, 40]) - 20) / np.std([10, 10, 40], ddof=1), atol=1e-6)
    with pytest.raises(ValueError, match="at least 2 groups"):
        released_advantages(r, 1)
    with pytest.raises(ValueError, match="equal groups"):
        released_advantages(r, 4)


def test_hamming_neighbours_are_every_single_edit_and_x_itself():
    from stages.sepo.policy import hamming_neighbours

    x = torch.tensor([[0, 1, 2], [3, 3, 0]])
    y = hamming_neighbours(x)
    assert y.shape == (2, 3, 4, 3)
    for i in range(2):
        for l in range(3):
            for v in range(4):
                want = x[i].clone()
                want[l] = v
                assert torch.equal(y[i, l, v], want)


def test_released_pi_is_the_snis_over_the_diagonal_with_a_constant_proposal():
    """The released compute_expression, written out: pi(z | y) = RELEASED_MOVE_CHANCE p(z | clean y);
    m draws per position; "pi(z_i)" = 1 / clamp(log-prob, 1e-8) = 1e8 (every log-probability <= 0);
    sample k enters through position k only."""
    from stages.sepo.policy import RELEASED_MOVE_CHANCE, hamming_neighbours, released_pi

    m_, length, M = _model(4, 5), 4, 2
    x = torch.tensor([[0, 3, 3, 1], [2, 2, 0, 1]])
    got = released_pi(m_, x, M, torch.Generator().manual_seed(3))
    y = hamming_neighbours(x).reshape(-1, length)
    with torch.no_grad():
        logp = m_(y)
    assert torch.all(logp.clamp(min=1e-8) == 1e-8)            # quirk 1: the clamp of a log-probability
    pi = logp.exp() * RELEASED_MOVE_CHANCE
    z = torch.multinomial(pi.reshape(-1, 4), M, replacement=True,
                          generator=torch.Generator().manual_seed(3)).view(-1, length, M)
    want = torch.empty(len(y))
    for j in range(len(y)):
        p_k = torch.stack([pi[j, k, z[j, k, k]] for k in range(M)])   # sample k at position k
        w = 1e8 / (p_k + 1e-8)
        want[j] = (p_k * w).sum() / (w.sum() + 1e-8)
    assert torch.allclose(got.reshape(-1), want, rtol=1e-5)
    # a model whose outputs at positions >= M change leaves pi_y as it was (positions 0 .. M-1 only)
    assert got.shape == (2, length, 4) and float(got.min()) > 0


def test_released_loss_by_hand_and_its_gradient_direction():
    """Two groups of two: the released loss is the mean over the groups of min(A_g . sum pi rho log s / B,
    A_g . sum pi clip(rho) log s / B), rho = (pi / pi_old)(s_old / s); its gradient flows through log s alone."""
    import copy

    from stages.sepo.policy import released_loss, released_pi

    m_ = _model(3, 6)
    old = copy.deepcopy(m_)
    with torch.no_grad():
        for prm in m_.parameters():
            prm.add_(0.05 * torch.randn_like(prm))
    x = torch.tensor([[0, 1, 2], [3, 3, 0], [1, 1, 1], [2, 0, 3]])
    adv = torch.tensor([1.0, -0.5, 0.2, -0.7])
    got = released_loss(m_, old, x, adv, 2, 0.2, 2, torch.Generator().manual_seed(9))
    gen = torch.Generator().manual_seed(9)
    with torch.no_grad():
        pi_old = released_pi(old, x, 2, gen)
        pi = released_pi(m_, x, 2, gen)
        log_s, s_old = m_(x), old(x).exp()
    rho = (pi / pi_old) * (s_old / log_s.exp())
    want = 0.0
    for g in (slice(0, 2), slice(2, 4)):
        a = adv[g] @ (pi * rho * log_s).sum((1, 2))[g] / 2
        b = adv[g] @ (pi * rho.clamp(0.8, 1.2) * log_s).sum((1, 2))[g] / 2
        want += float(min(a, b)) / 2
    assert float(got) == pytest.approx(want, rel=1e-5)
    got.backward()
    assert all(p.grad is not None for p in m_.parameters()) and all(p.grad is None for p in old.parameters())


def test_sepo_refuses_an_unknown_objective():
    from stages.sepo.runs import sepo

    m_ = _model(4, 7)
    r_all = motif_reward(all_sequences(4), "TATA", 0.25)
    with pytest.raises(ValueError, match="unknown SEPO objective"):
        sepo(m_, lambda s: motif_reward(s, "TATA", 0.25), exact_distribution(m_), r_all, steps=1, groups=2,
             group_size=2, inner=1, lr=1e-4, clip=0.2, per_group=False, eval_every=1, seed=0, objective="ppo")
