"""mpo's core: a batched Pendulum-v1, its expert, per-state action-preference datasets with
mixed quality and label flips, the parametric preference-loss family (DPO and ORPO as corners),
training from the reference policy, and returns.

The environment is gymnasium's classic-control Pendulum-v1 with its torque cut into ``N_ACTIONS``
bins. ``BatchPendulum`` steps many copies at once in numpy with gymnasium's equations (a test checks
it against ``gymnasium.make("Pendulum-v1")`` step by step); the registered policies are also rolled
out in gymnasium itself in the evaluate stage.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_ACTIONS = 9
TORQUES = np.linspace(-2.0, 2.0, N_ACTIONS)
HORIZON = 200
G, M, L, DT, MAX_SPEED, MAX_TORQUE = 10.0, 1.0, 1.0, 0.05, 8.0, 2.0
OBS_DIM = 3


def angle_normalize(x):
    return ((x + np.pi) % (2 * np.pi)) - np.pi


class BatchPendulum:
    """``n`` Pendulum-v1 copies stepped together (gymnasium 1.4's dynamics, reward and reset ranges)."""

    def __init__(self, n: int, rng: np.random.Generator):
        self.th = rng.uniform(-np.pi, np.pi, n)
        self.thdot = rng.uniform(-1.0, 1.0, n)

    def obs(self) -> np.ndarray:
        return np.stack([np.cos(self.th), np.sin(self.th), self.thdot], axis=1).astype(np.float32)

    def step(self, u: np.ndarray) -> np.ndarray:
        u = np.clip(u, -MAX_TORQUE, MAX_TORQUE)
        cost = angle_normalize(self.th) ** 2 + 0.1 * self.thdot ** 2 + 0.001 * u ** 2
        thdot = self.thdot + (3 * G / (2 * L) * np.sin(self.th) + 3.0 / (M * L ** 2) * u) * DT
        self.thdot = np.clip(thdot, -MAX_SPEED, MAX_SPEED)
        self.th = self.th + self.thdot * DT
        return -cost


def expert_torque(obs: np.ndarray) -> np.ndarray:
    """A hand-written swing-up controller: energy pumping far from the top, PD near it."""
    c, s, thdot = obs[:, 0], obs[:, 1], obs[:, 2]
    th = np.arctan2(s, c)
    energy = thdot ** 2 / 6.0 + G / 2.0 * (c - 1.0)               # 0 at the top at rest
    pump = np.where(energy < 0, 2.0 * np.sign(thdot + 1e-6), -0.5 * thdot)
    pd = -(12.0 * th + 2.5 * thdot)
    return np.clip(np.where(c > 0.85, pd, pump), -MAX_TORQUE, MAX_TORQUE)


def expert_action(obs: np.ndarray) -> np.ndarray:
    return np.abs(TORQUES[None, :] - expert_torque(obs)[:, None]).argmin(1)


def rollout(act, n: int, rng: np.random.Generator, horizon: int = HORIZON, collect: bool = False):
    """Run ``act(obs) -> action indices`` on ``n`` pendulums; returns (returns, visited states)."""
    env = BatchPendulum(n, rng)
    total = np.zeros(n)
    states = []
    for _ in range(horizon):
        o = env.obs()
        if collect:
            states.append(o)
        total += env.step(TORQUES[act(o)])
    return total, (np.concatenate(states) if collect else None)


def noisy_expert(p_random: float, rng: np.random.Generator):
    def act(o):
        a = expert_action(o)
        r = rng.random(len(o)) < p_random
        return np.where(r, rng.integers(0, N_ACTIONS, len(o)), a)
    return act


# ---------------------------------------------------------------------------------------- data


@dataclass
class Prefs:
    s: np.ndarray        # (n, 3) states
    w: np.ndarray        # (n,) chosen action
    lo: np.ndarray       # (n,) rejected action
    true_w: np.ndarray   # (n,) 1 where the chosen one is truly nearer the expert


def make_prefs(states: np.ndarray, ref_probs: np.ndarray, flip: float, mixed: float,
               rng: np.random.Generator) -> Prefs:
    """Two distinct actions per state drawn from the reference policy; the one nearer the expert's
    torque is chosen. A ``mixed`` share of the pairs is drawn only among the worse half of the
    actions (both poor: the chosen one is a poor action too); then labels flip with rate ``flip``."""
    n = len(states)
    dist = np.abs(TORQUES[None, :] - expert_torque(states)[:, None])
    p = ref_probs.copy()
    poor = rng.random(n) < mixed
    if poor.any():
        rank = dist[poor].argsort(1).argsort(1)                     # 0 = nearest the expert
        p[poor] = np.where(rank >= N_ACTIONS // 2, p[poor], 0.0) + 1e-6 * (rank >= N_ACTIONS // 2)
    p = p / p.sum(1, keepdims=True)
    a = _sample(p, rng)
    p2 = p.copy()
    p2[np.arange(n), a] = 0.0
    p2 = p2 / p2.sum(1, keepdims=True)
    b = _sample(p2, rng)
    a_better = dist[np.arange(n), a] < dist[np.arange(n), b]
    w, lo = np.where(a_better, a, b), np.where(a_better, b, a)
    fl = rng.random(n) < flip
    w, lo = np.where(fl, lo, w), np.where(fl, w, lo)
    return Prefs(states.astype(np.float32), w, lo, (~fl).astype(np.int8))


def _sample(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = rng.random((len(p), 1))
    return np.minimum((p.cumsum(1) < u).sum(1), p.shape[1] - 1)


# ------------------------------------------------------------------------------------- the loss

# Loss parameters: beta (inverse temperature of the implicit reward), c (weight of -log(1-p) in the
# mirror map: c=1 is log-odds, ORPO's), d (weight of the Tsallis term (p^q-1)/q, q=0.5), w_ref
# (weight of the reference policy in the reward), eps (label smoothing: cDPO), lam (NLL of the
# chosen action: ORPO's SFT term).
FAMILY_KEYS = ("beta", "c", "d", "w_ref", "eps", "lam")
Q = 0.5


def dpo(beta: float) -> dict:
    return {"beta": beta, "c": 0.0, "d": 0.0, "w_ref": 1.0, "eps": 0.0, "lam": 0.0}


def cdpo(beta: float, eps: float) -> dict:
    return {**dpo(beta), "eps": eps}


def orpo(beta: float) -> dict:
    """ORPO: NLL(chosen) + beta * -log sigma(log-odds_w - log-odds_l). In the family that is
    c=1, w_ref=0 and, after dividing the whole loss by beta (Adam is invariant to the scale), lam=1/beta."""
    return {"beta": 1.0, "c": 1.0, "d": 0.0, "w_ref": 0.0, "eps": 0.0, "lam": 1.0 / beta}


def mirror(logp, log1mp, c: float, d: float):
    """phi^{-1}(p) = log p - c log(1-p) + d (p^q - 1)/q, from log p and log(1-p)."""
    import torch

    return logp - c * log1mp + d * (torch.exp(Q * logp) - 1.0) / Q


def family_loss(logits, ref_logp, w, lo, theta: dict):
    """Mean loss of the family over pairs. ``logits`` (n, A) of the policy, ``ref_logp`` (n, A)."""
    import torch
    import torch.nn.functional as F

    logp = F.log_softmax(logits, 1)
    idx = torch.arange(len(w))
    lp_w, lp_l = logp[idx, w], logp[idx, lo]
    # log(1 - p_a) = logsumexp of the other actions' log-probabilities (stable near p = 1)
    def log1m(a):
        mask = F.one_hot(a, logits.shape[1]).bool()
        return torch.logsumexp(logp.masked_fill(mask, -1e30), 1)
    c, d = theta["c"], theta["d"]
    r_w = mirror(lp_w, log1m(w), c, d)
    r_l = mirror(lp_l, log1m(lo), c, d)
    if theta["w_ref"] != 0.0:
        ref_w, ref_l = ref_logp[idx, w], ref_logp[idx, lo]
        rw_ref = mirror(ref_w, torch.log1p(-ref_w.exp().clamp(max=1 - 1e-6)), c, d)
        rl_ref = mirror(ref_l, torch.log1p(-ref_l.exp().clamp(max=1 - 1e-6)), c, d)
        r_w = r_w - theta["w_ref"] * rw_ref
        r_l = r_l - theta["w_ref"] * rl_ref
    margin = theta["beta"] * (r_w - r_l)
    eps = theta["eps"]
    loss = (1 - eps) * F.softplus(-margin) + eps * F.softplus(margin)
    if theta["lam"] != 0.0:
        loss = loss - theta["lam"] * lp_w
    return loss.mean()


# ------------------------------------------------------------------------------------- policies


def make_policy(hidden: int):
    import torch

    return torch.nn.Sequential(torch.nn.Linear(OBS_DIM, hidden), torch.nn.Tanh(),
                               torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
                               torch.nn.Linear(hidden, N_ACTIONS))


def greedy(policy):
    import torch

    def act(o):
        with torch.no_grad():
            return policy(torch.from_numpy(o)).argmax(1).numpy()
    return act


def sampler(policy, rng: np.random.Generator):
    """Act by sampling the policy's softmax (the stochastic policy PO trains), seeded by ``rng``."""
    import torch

    def act(o):
        with torch.no_grad():
            p = torch.softmax(policy(torch.from_numpy(o)), 1).double().numpy()
        return _sample(p, rng)
    return act


def behaviour_clone(states, actions, hidden: int, steps: int, lr: float, seed: int):
    import torch
    import torch.nn.functional as F

    from stages.common.optim import Adam

    torch.manual_seed(seed)
    pol = make_policy(hidden)
    opt = Adam(pol.parameters(), lr=lr)
    x, y = torch.from_numpy(states), torch.from_numpy(actions).long()
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(pol(x), y).backward()
        opt.step()
    return pol


def train_po(ref_state: dict, prefs: Prefs, theta: dict, hidden: int, steps: int, lr: float):
    """Start from the reference policy and minimise the family's loss, full batch, ``steps`` Adam steps."""
    import torch
    import torch.nn.functional as F

    from stages.common.optim import Adam

    pol = make_policy(hidden)
    pol.load_state_dict(ref_state)
    ref = make_policy(hidden)
    ref.load_state_dict(ref_state)
    x = torch.from_numpy(prefs.s)
    with torch.no_grad():
        ref_logp = F.log_softmax(ref(x), 1)
    w, lo = torch.from_numpy(prefs.w).long(), torch.from_numpy(prefs.lo).long()
    opt = Adam(pol.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        family_loss(pol(x), ref_logp, w, lo, theta).backward()
        opt.step()
    return pol


POLICY_KEYS = ("0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias")


def _stacked_forward(ps, x):
    """The policy MLP of ``make_policy`` for B members at once: weights with a leading member
    dimension, ``x`` (B, n, 3) -> logits (B, n, A)."""
    import torch

    w1, b1, w2, b2, w3, b3 = ps
    h = torch.tanh(torch.baddbmm(b1.unsqueeze(1), x, w1.transpose(1, 2)))
    h = torch.tanh(torch.baddbmm(b2.unsqueeze(1), h, w2.transpose(1, 2)))
    return torch.baddbmm(b3.unsqueeze(1), h, w3.transpose(1, 2))


def family_loss_batch(logits, ref_logp, w, lo, th: dict):
    """``family_loss`` for B members at once: ``logits``/``ref_logp`` (B, n, A), ``w``/``lo`` (B, n),
    ``th`` maps each of FAMILY_KEYS to a (B, 1) tensor. Returns each member's mean loss, (B,). A zero
    ``w_ref`` or ``lam`` multiplies its term by 0, which leaves the same value as leaving it out."""
    import torch
    import torch.nn.functional as F

    logp = F.log_softmax(logits, -1)
    lp_w, lp_l = logp.gather(-1, w[..., None])[..., 0], logp.gather(-1, lo[..., None])[..., 0]

    def log1m(a):
        mask = F.one_hot(a, logits.shape[-1]).bool()
        return torch.logsumexp(logp.masked_fill(mask, -1e30), -1)
    c, d = th["c"], th["d"]
    r_w = mirror(lp_w, log1m(w), c, d)
    r_l = mirror(lp_l, log1m(lo), c, d)
    ref_w, ref_l = ref_logp.gather(-1, w[..., None])[..., 0], ref_logp.gather(-1, lo[..., None])[..., 0]
    rw_ref = mirror(ref_w, torch.log1p(-ref_w.exp().clamp(max=1 - 1e-6)), c, d)
    rl_ref = mirror(ref_l, torch.log1p(-ref_l.exp().clamp(max=1 - 1e-6)), c, d)
    r_w = r_w - th["w_ref"] * rw_ref
    r_l = r_l - th["w_ref"] * rl_ref
    margin = th["beta"] * (r_w - r_l)
    eps = th["eps"]
    loss = (1 - eps) * F.softplus(-margin) + eps * F.softplus(margin) - th["lam"] * lp_w
    return loss.mean(-1)


def train_po_batch(ref_state: dict, prefs: list, thetas: list[dict], hidden: int, steps: int, lr: float):
    """``train_po`` for many (draw, loss) members at once, one stacked network with a member
    dimension (the same reference for all; draws of equal size): full batch, ``steps`` Adam steps
    (Adam is elementwise and the members' losses are summed, so each member follows its own
    gradient). Returns one ``make_policy`` module per member."""
    import torch
    import torch.nn.functional as F

    from stages.common.optim import Adam

    n = len(thetas)
    if n != len(prefs) or n == 0:
        raise ValueError(f"train_po_batch: {len(prefs)} draws for {n} losses")
    base = [ref_state[k].detach().float() for k in POLICY_KEYS]
    params = [b.unsqueeze(0).repeat(n, *([1] * b.dim())).clone().requires_grad_(True) for b in base]
    x = torch.stack([torch.from_numpy(np.asarray(pr.s, dtype=np.float32)) for pr in prefs])
    w = torch.stack([torch.from_numpy(np.asarray(pr.w)).long() for pr in prefs])
    lo = torch.stack([torch.from_numpy(np.asarray(pr.lo)).long() for pr in prefs])
    th = {k: torch.tensor([float(t[k]) for t in thetas], dtype=torch.float32).view(n, 1) for k in FAMILY_KEYS}
    with torch.no_grad():
        ref_logp = F.log_softmax(_stacked_forward([p.detach() for p in params], x), -1)
    opt = Adam(params, lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        family_loss_batch(_stacked_forward(params, x), ref_logp, w, lo, th).sum().backward()
        opt.step()
    out = []
    for i in range(n):
        pol = make_policy(hidden)
        pol.load_state_dict({k: p[i].detach().clone() for k, p in zip(POLICY_KEYS, params)})
        out.append(pol)
    return out


def normalised(ret: np.ndarray | float, lo: float, hi: float):
    """(return - random policy's) / (expert's - random policy's): 0 random, 1 expert."""
    return (np.asarray(ret) - lo) / (hi - lo)


def theta_from_vector(x: np.ndarray) -> dict:
    """CMA-ES search coordinates -> loss parameters (x = 0 is DPO with beta = 1)."""
    return {"beta": float(np.exp(x[0])), "c": float(x[1]), "d": float(x[2]),
            "w_ref": float(1.0 + x[3]), "eps": float(np.clip(x[4], 0.0, 0.45)),
            "lam": float(max(x[5], 0.0))}


# ------------------------------------------------------------------------------- saved policies


def save_policy_mlflow(target, state_dict: dict, hidden: int, theta: dict, states: np.ndarray) -> None:
    """Write a policy as an MLflow pyfunc model folder at ``target`` (atomically): ``weights.pt``
    (a state dict), ``config.json`` (width, the loss parameters it was trained with) and
    stages/mpo/pyfunc.py (models from code). ``states`` (rows of cos, sin, thdot) are its input
    example, as float64 columns, from which MLflow infers its signature."""
    import json
    import tempfile
    from pathlib import Path

    import pandas as pd
    import torch

    from stages.common.mlmodel import save_pyfunc

    with tempfile.TemporaryDirectory() as scratch:
        weights, config = Path(scratch) / "weights.pt", Path(scratch) / "config.json"
        torch.save(state_dict, weights)
        config.write_text(json.dumps({"hidden": hidden, "obs_dim": OBS_DIM, "n_actions": N_ACTIONS,
                                      "torques": TORQUES.tolist(), "loss": theta}, sort_keys=True, indent=1))
        example = pd.DataFrame(np.asarray(states, dtype=np.float64), columns=["cos", "sin", "thdot"])
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights, "config": config},
                    input_example=example)


def load_policy(weights: str, config: str):
    """The policy :func:`save_policy_mlflow` wrote (weights loaded with weights_only)."""
    import json

    import torch

    cfg = json.loads(open(config).read())
    if cfg["obs_dim"] != OBS_DIM or cfg["n_actions"] != N_ACTIONS:
        raise ValueError(f"{config}: the policy has {cfg['obs_dim']} inputs and {cfg['n_actions']} actions; "
                         f"this code makes {OBS_DIM} and {N_ACTIONS}")
    pol = make_policy(cfg["hidden"])
    pol.load_state_dict(torch.load(weights, weights_only=True))
    return pol.eval()
