"""The L2D baseline (stages/jsp_multipolicy/l2d.py) against plain re-statements of L2D's own code
(zcaicaros/L2D): the lower bounds of updateEntTimeLB.calEndTimeLB, the adjacency JSSP_Env keeps
(with append dispatching: the machine predecessor is the machine's last operation) multiplied as
a dense matrix, as GraphCNN does; rewards that sum to the first max LB minus the makespan; the
PPO loss on a hand case; training that is deterministic, finite and learns on a tiny budget."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.jsp_multipolicy.jsp import random_instances, schedule
from stages.jsp_multipolicy.l2d import (LB_SCALE, Graph, build_l2d, forward, ppo_loss, rollout, sample_best,
                                        stack, train_l2d)


def cal_end_time_lb(temp1, dur):
    """L2D's updateEntTimeLB.calEndTimeLB, restated: temp1 holds the end times of scheduled ops."""
    dur_cp = dur.astype(float).copy()
    mask = temp1 != 0
    x = np.arange(temp1.shape[0])
    last = temp1.shape[1] - np.flip(mask, 1).argmax(1) - 1
    has = mask.any(1)
    dur_cp[mask] = 0
    dur_cp[x[has], last[has]] = temp1[x[has], last[has]]
    temp2 = np.cumsum(dur_cp, 1)
    temp2[mask] = 0
    return temp1 + temp2


def l2d_dense(net, M, D, seq):
    """Logits and values of one shop along a dispatch sequence, computed as L2D's code does: a
    dense adjacency (self, job predecessor; once scheduled the machine predecessor), adj @ h, the
    MLPs, mean pooling."""
    n, m = D.shape
    N = n * m
    adj = np.eye(N) + np.eye(N, k=-1) * (np.arange(N) % m > 0)[:, None]
    temp1 = np.zeros((n, m))
    nxt, jr, mr, last = [0] * n, [0] * n, [0] * m, [-1] * m
    out = []
    sd = net.state_dict()

    def mlp(x, pre):
        x = torch.relu(x @ sd[f"{pre}.0.weight"].T + sd[f"{pre}.0.bias"])
        return x @ sd[f"{pre}.2.weight"].T + sd[f"{pre}.2.bias"]

    for j in seq:
        lb = cal_end_time_lb(temp1, D)
        x = torch.tensor(np.stack([lb.reshape(-1) / LB_SCALE, (temp1 != 0).reshape(-1)], 1), dtype=torch.float32)
        A = torch.tensor(adj, dtype=torch.float32)
        h = x
        for layer in range(2):
            h = torch.relu(mlp(A @ h, f"gin.{layer}"))
        g = h.mean(0)
        cand = h[[jj * m + min(nxt[jj], m - 1) for jj in range(n)]]
        a = torch.tanh(torch.cat([cand, g.expand_as(cand)], 1) @ sd["actor.0.weight"].T + sd["actor.0.bias"])
        scores = a @ sd["actor.2.weight"].T + sd["actor.2.bias"]
        scores = scores.squeeze(-1).masked_fill(torch.tensor([nxt[jj] >= m for jj in range(n)]), -float("inf"))
        c = torch.tanh(g @ sd["critic.0.weight"].T + sd["critic.0.bias"])
        out.append((scores, (c @ sd["critic.2.weight"].T + sd["critic.2.bias"]).squeeze(-1), lb.max()))
        k = nxt[j]
        node, mach = j * m + k, M[j, k]
        s = max(jr[j], mr[mach])
        jr[j] = mr[mach] = s + D[j, k]
        temp1[j, k] = s + D[j, k]
        adj[node] = 0
        adj[node, node] = 1
        if k > 0:
            adj[node, node - 1] = 1
        if last[mach] >= 0:
            adj[node, last[mach]] = 1
        last[mach] = node
        nxt[j] += 1
    return out


def test_lower_bounds_match_l2d_by_hand_and_along_a_schedule():
    # 2 jobs x 3 machines; job 0's first op ends at 5 (it waited), job 1 has nothing scheduled
    D = np.array([[3, 2, 4], [1, 5, 2]])
    assert cal_end_time_lb(np.array([[5.0, 0, 0], [0, 0, 0]]), D).tolist() == [[5, 7, 11], [1, 6, 8]]
    rng = np.random.default_rng(0)
    M, Dd = random_instances(1, 4, 3, rng)
    seq = rng.permutation(np.repeat(np.arange(4), 3))
    start, _ = schedule(M[0], Dd[0], seq)
    end = start + Dd[0]
    g = Graph(torch.as_tensor(M), torch.as_tensor(Dd))
    temp1, nxt = np.zeros((4, 3)), [0] * 4
    for j in seq:
        assert np.allclose(g.lower_bounds()[0].numpy(), cal_end_time_lb(temp1, Dd[0]))
        temp1[j, nxt[j]] = end[j, nxt[j]]
        nxt[j] += 1
        g.step(torch.tensor([j]))
    assert np.allclose(g.lower_bounds()[0].numpy(), end)


def test_gather_gin_equals_l2ds_dense_adjacency_forward():
    torch.manual_seed(0)
    net = build_l2d(16, 8)
    rng = np.random.default_rng(1)
    M, D = random_instances(1, 3, 4, rng)
    seq = list(rng.permutation(np.repeat(np.arange(3), 4)))
    ref = l2d_dense(net, M[0], D[0], seq)
    g = Graph(torch.as_tensor(M), torch.as_tensor(D))
    P = stack([net])
    for t, j in enumerate(seq):
        lg, v, max_lb = forward(P, g, 1)
        assert torch.allclose(lg[0, 0], ref[t][0], atol=1e-5), t
        assert torch.allclose(v[0, 0], ref[t][1], atol=1e-5) and float(max_lb[0]) == ref[t][2]
        g.step(torch.tensor([j]))


def test_rewards_sum_to_first_max_lb_minus_makespan_and_grads_are_finite():
    torch.manual_seed(0)
    nets = [build_l2d(8, 8), build_l2d(8, 8)]
    M, D = random_instances(6, 4, 4, np.random.default_rng(2))
    mach, dur = torch.as_tensor(M), torch.as_tensor(D)
    gens = [torch.Generator().manual_seed(s) for s in (5, 6)]
    P = stack(nets, grad=True)
    acts, ms, logp, ent, val, rew = rollout(P, mach, dur, 2, gens, grad=True)
    lb0 = D.cumsum(2).max((1, 2))
    assert np.allclose(rew.sum(-1).flatten().numpy(), lb0 - ms.numpy())
    for i in range(6):
        assert schedule(M[i], D[i], acts[i].tolist())[1] == int(ms[i])
    assert (ent >= 0).all() and logp.shape == (2, 3, 16) and (logp <= 0).all()
    ppo_loss(logp, ent, val, rew).sum().backward()
    assert all(torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0 for p in P.values())


def test_ppo_loss_by_hand():
    # one seed, one episode of two steps: rewards (3, 1) -> returns to go (4, 1) -> standardised
    # over the episode (std with n - 1 = 1.5 sqrt 2): r = +-1.5 / (1.5 sqrt 2 + 1e-5); values 0, so
    # the advantage is r; the ratio is 1: surrogate = r; entropy log 2 at every step
    logp = torch.log(torch.full((1, 1, 2), 0.5))
    ent = torch.full((1, 1, 2), float(np.log(2)))
    rew = torch.tensor([[[3.0, 1.0]]])
    r = np.array([1.0, -1.0]) * 1.5 / (1.5 * np.sqrt(2) + 1e-5)
    want = 1.0 * np.mean(r ** 2) + np.mean(-2.0 * r - 0.01 * np.log(2))
    assert abs(float(ppo_loss(logp, ent, torch.zeros(1, 1, 2), rew)[0]) - want) < 1e-6


def test_training_is_deterministic_per_seed_and_learns_a_little():
    kw = dict(updates=12, episodes=8, n_jobs=4, n_machines=4, kind="jssp", hidden=16, hidden_head=8, lr=3e-3)
    a, ha = train_l2d([1000, 1001], **kw)
    b, hb = train_l2d([1001], **kw)
    assert all(torch.equal(x, y) for x, y in zip(a[1].state_dict().values(), b[0].state_dict().values()))
    assert ha[1001] == hb[1001] and ha[1000] != ha[1001]
    M, D = random_instances(4, 4, 4, np.random.default_rng(3))
    best = sample_best(a, M, D, 8, [7, 7])
    greedy = sample_best(a, M, D, 8, [7, 7], greedy=True)
    assert best.shape == (2, 4) and (best <= greedy).all()
    with pytest.raises(ValueError, match="must be >= 1"):
        train_l2d([1000], **{**kw, "episodes": 0})
