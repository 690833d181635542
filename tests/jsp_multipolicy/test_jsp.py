"""jsp_multipolicy maths: the batched simulator against a plain reference and a hand case, the
schedule checker, the dispatching rules by hand, CP-SAT's optimum against brute force on a tiny
shop, self-label weights, determinism of training, and bad inputs."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from stages.jsp_multipolicy.jsp import (RULES, Shop, check_schedule, cpsat_solve, random_instances, rule_makespans,
                                        schedule)

# 2 jobs x 2 machines by hand: job 0 = (m0, 3) then (m1, 2); job 1 = (m1, 4) then (m0, 1)
HM = np.array([[0, 1], [1, 0]])
HD = np.array([[3, 2], [4, 1]])


def test_schedule_by_hand():
    start, ms = schedule(HM, HD, [0, 1, 0, 1])
    # j0 op0 [0,3) on m0; j1 op0 [0,4) on m1; j0 op1 on m1 from max(3,4)=4 to 6; j1 op1 on m0 from max(4,3)=4 to 5
    assert start.tolist() == [[0, 4], [0, 4]] and ms == 6
    assert check_schedule(HM, HD, start) == 6


def test_checker_rejects_overlap_and_precedence():
    with pytest.raises(ValueError, match="precedence"):
        check_schedule(HM, HD, np.array([[0, 2], [0, 4]]))
    with pytest.raises(ValueError, match="machine 1"):
        check_schedule(HM, HD, np.array([[0, 3], [0, 7]]))


def test_batched_shop_matches_reference():
    import torch

    rng = np.random.default_rng(0)
    M, D = random_instances(6, 5, 4, rng)
    seqs = [rng.permutation(np.repeat(np.arange(5), 4)) for _ in range(6)]
    shop = Shop(torch.as_tensor(M), torch.as_tensor(D))
    for t in range(20):
        shop.features()
        shop.step(torch.as_tensor([s[t] for s in seqs]))
    ref = [schedule(M[i], D[i], seqs[i])[1] for i in range(6)]
    assert shop.makespan().numpy().astype(int).tolist() == ref
    assert not shop.mask().any()


def test_rules_by_hand():
    # SPT: job 0 (3 < 4), job 1 (4 < 2? no: job 0's next is 2) -> 0, 0, 1, 1: j0 [0,3) m0, [3,5) m1;
    # j1 on m1 from 5 to 9, then m0 [9,10) -> 10. MWKR: tie 5 = 5 -> job 0, then job 1 (5 > 2),
    # job 0 (2 > 1), job 1 -> the sequence 0, 1, 0, 1 of test_schedule_by_hand -> 6. MOPNR: ties
    # (lowest id) -> 0, 1, 0, 1 as well.
    assert rule_makespans(HM[None], HD[None], "SPT").tolist() == [10]
    assert rule_makespans(HM[None], HD[None], "MWKR").tolist() == [6]
    assert rule_makespans(HM[None], HD[None], "MOPNR").tolist() == [6]
    with pytest.raises(ValueError, match="rule must be one of"):
        rule_makespans(HM[None], HD[None], "LPT")
    assert set(RULES) == {"SPT", "MWKR", "MOPNR"}


def test_cpsat_optimum_equals_brute_force():
    """CP-SAT (in a spawned worker) against the best of every dispatch sequence on a 3x3 shop;
    semi-active schedules from all sequences contain an optimal one."""
    from stages.common.isolated import map_isolated

    rng = np.random.default_rng(3)
    M, D = random_instances(1, 3, 3, rng)
    seqs = set(itertools.permutations([0, 0, 0, 1, 1, 1, 2, 2, 2]))
    brute = min(schedule(M[0], D[0], s)[1] for s in seqs)
    (res,) = map_isolated(cpsat_solve, [(M[0].tolist(), D[0].tolist(), 10.0)], 1)
    assert res["optimal"] and res["makespan"] == brute == res["bound"]
    assert check_schedule(M[0], D[0], np.array(res["start"])) == brute


def test_flow_shop_and_bad_instances():
    M, _ = random_instances(2, 4, 3, np.random.default_rng(0), kind="flow")
    assert (M == np.arange(3)).all()
    with pytest.raises(ValueError, match="kind must be"):
        random_instances(1, 2, 2, np.random.default_rng(0), kind="fjsp")
    with pytest.raises(ValueError, match="low <= high"):
        random_instances(1, 2, 2, np.random.default_rng(0), low=5, high=2)
    with pytest.raises(ValueError, match="exactly 2 times"):
        schedule(HM, HD, [0, 0, 1])


def test_label_weights_and_training_determinism():
    import torch

    from stages.jsp_multipolicy.policy import arm_shape, best_of, label_weights, train_arm

    w = label_weights(torch.tensor([[100.0, 110.0]]), 0.1)
    assert torch.allclose(w, torch.tensor([[1.0, float(np.exp(-1.0))]]))
    assert (label_weights(torch.tensor([[100.0, 200.0]]), float("inf")) == 1).all()
    with pytest.raises(ValueError, match="tau must be > 0"):
        label_weights(w, 0.0)
    assert [arm_shape(a, 4) for a in ("single", "multi", "blind")] == [(1, 1), (4, 4), (1, 4)]
    with pytest.raises(ValueError, match="arm must be one of"):
        arm_shape("uniform", 4)
    kw = dict(steps=2, instances=2, samples=4, n_jobs=3, n_machines=3, kind="jssp", hidden=8, lr=1e-3, tau=0.1)
    with pytest.raises(ValueError, match="multiple of the arm's 3 label groups"):
        train_arm("multi", [1000], n_policies=3, **kw)
    M, D = random_instances(3, 4, 4, np.random.default_rng(1))
    runs = [best_of(train_arm("multi", [1005], n_policies=2, **kw)[0], M, D, 4, [9])[0] for _ in range(2)]
    assert runs[0].tolist() == runs[1].tolist()
    lower = np.maximum(D.sum(2).max(1), np.array([[D[i][M[i] == m].sum() for m in range(4)]
                                                  for i in range(3)]).max(1))
    assert (runs[0][0] >= lower).all()


def test_each_arms_first_loss_recomputed_by_hand():
    """single imitates each shop's best of all samples; blind the best of each of the K groups
    (weights exp(-gap / tau)) with one policy; multi the same labels, each group sampled and
    imitated by its own policy id. Recomputed from the seed's start, shops and noise."""
    import torch

    from stages.jsp_multipolicy.policy import (init_nets, label_weights, replay_ce, rollout, seed_generators, stack,
                                               train_arm)

    tau = 0.05
    kw = dict(steps=1, instances=2, samples=8, n_jobs=3, n_machines=3, kind="jssp", hidden=8, lr=1e-3,
              n_policies=4, tau=tau)
    hist = {arm: train_arm(arm, [1000], **kw)[1][1000][0] for arm in ("single", "blind", "multi")}
    M, D = random_instances(2, 3, 3, np.random.default_rng([1000, 1]), "jssp")
    mach, dur = torch.as_tensor(M).repeat_interleave(8, 0), torch.as_tensor(D).repeat_interleave(8, 0)
    for arm, k_net, k_lab in (("single", 1, 1), ("blind", 1, 4), ("multi", 4, 4)):
        P = stack(init_nets(k_net, 8, [1000]))
        group = torch.arange(k_lab).repeat_interleave(8 // k_lab).repeat(2)
        pid = (group if arm == "multi" else torch.zeros_like(group)).unsqueeze(0)
        acts, ms = rollout(P, mach, dur, pid, seed_generators([1000]))
        best, arg = ms.view(2, k_lab, 8 // k_lab).min(-1)
        rows = (torch.arange(2).unsqueeze(1) * 8 + torch.arange(k_lab) * (8 // k_lab) + arg).reshape(-1)
        w = label_weights(best, tau).reshape(-1)
        ce = replay_ce(P, mach[rows], dur[rows], pid[0, rows].unsqueeze(0), acts[rows])[0]
        assert abs(float((w * ce).sum() / w.sum()) - hist[arm]["loss"]) < 1e-5, arm
        assert float(ms.float().mean()) == hist[arm]["mean_makespan"]
    # single and blind start from the same network and noise: the same samples, other labels
    assert hist["single"]["mean_makespan"] == hist["blind"]["mean_makespan"]
    assert hist["single"]["loss"] != hist["blind"]["loss"]
