"""The web agent: a tiny transformer policy over the ReAct context (question, breadcrumb, links,
page fact), its SFT cold start, batched rollouts and RL (group-relative advantages with DAPO's
clip-higher, from the shared core stages/common/pg.py).
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from stages.common.optim import Adam
from stages.common.pg import clipped_surrogate, group_advantages

from .web import Batch, Layout


class Policy(nn.Module):
    """Token + position embeddings, ``layers`` transformer encoder layers; click(i) logits read the
    i-th link token's state (a pointer over the links), back and answer(v) the mean-pooled state."""

    def __init__(self, vocab: int, obs_len: int, n_actions: int, k: int, d_model: int = 32, layers: int = 1,
                 heads: int = 4):
        super().__init__()
        self.config = {"vocab": vocab, "obs_len": obs_len, "n_actions": n_actions, "k": k, "d_model": d_model,
                       "layers": layers, "heads": heads}
        self.k, self.link0 = k, obs_len - 1 - k
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.randn(obs_len, d_model) * 0.1)
        layer = nn.TransformerEncoderLayer(d_model, heads, 2 * d_model, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.click = nn.Linear(d_model, 1)                  # one logit per link token (a pointer)
        self.head = nn.Linear(d_model, n_actions - k)       # back and answer(v) from the pooled context

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        h = self.enc(self.tok(obs) + self.pos)
        clicks = self.click(h[:, self.link0:self.link0 + self.k])[..., 0]
        return torch.cat([clicks, self.head(h.mean(1))], 1)


def make_policy(lay: Layout, d_model: int, layers: int, heads: int) -> Policy:
    return Policy(lay.vocab, lay.obs_len, lay.n_actions, lay.k, d_model, layers, heads)


def sft(policy: Policy, obs: np.ndarray, act: np.ndarray, epochs: int, batch: int, lr: float,
        gen: torch.Generator) -> list[float]:
    """Cross-entropy on the kept trajectories' (observation, action) steps; loss per epoch."""
    opt = Adam(policy.parameters(), lr=lr)
    x, y = torch.as_tensor(obs), torch.as_tensor(act)
    losses = []
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=gen)
        tot = 0.0
        for i in range(0, len(x), batch):
            j = perm[i:i + batch]
            loss = nn.functional.cross_entropy(policy(x[j]), y[j])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(j)
        losses.append(tot / len(x))
    return losses


def rollout(policy: Policy, lay: Layout, sites: dict, questions: dict, idx: np.ndarray, max_steps: int,
            gen: torch.Generator | None, temperature: float = 1.0) -> dict:
    """Run the episodes of questions ``idx`` together (one forward per step for all of them);
    ``gen=None`` or ``temperature=0`` acts greedily, else samples. Returns the rewards, steps used,
    and the per-step observations, actions, log-probabilities and live mask (episodes x steps)."""
    b = Batch(lay, sites, questions, idx, max_steps)
    obs_l, act_l, logp_l, live_l = [], [], [], []
    with torch.no_grad():
        while not b.done.all():
            o = torch.as_tensor(b.obs())
            logits = policy(o)
            if gen is None or temperature == 0:
                a = logits.argmax(1)
            else:
                a = torch.multinomial(torch.softmax(logits / temperature, 1), 1, generator=gen)[:, 0]
            logp = torch.log_softmax(logits, 1).gather(1, a[:, None])[:, 0]
            obs_l.append(o)
            act_l.append(a)
            logp_l.append(logp)
            live_l.append(torch.as_tensor(~b.done))
            b.step(a.numpy())
    return {"reward": b.reward.copy(), "steps": b.steps.copy(), "obs": torch.stack(obs_l, 1),
            "act": torch.stack(act_l, 1), "logp": torch.stack(logp_l, 1), "live": torch.stack(live_l, 1)}


def random_agent(lay: Layout, sites: dict, questions: dict, idx: np.ndarray, max_steps: int,
                 rng: np.random.Generator) -> dict:
    """A uniform random clicker: every action (click, back, answer) equally likely."""
    b = Batch(lay, sites, questions, idx, max_steps)
    while not b.done.all():
        b.step(rng.integers(0, lay.n_actions, size=len(idx)))
    return {"reward": b.reward.copy(), "steps": b.steps.copy()}


def rl(policy: Policy, lay: Layout, sites: dict, questions: dict, max_steps: int, iterations: int,
       n_questions: int, group: int, lr: float, clip: float, clip_high: float, epochs: int,
       gen: torch.Generator, rng: np.random.Generator, reward_noise: bool = False) -> list[float]:
    """GRPO with DAPO's clip-higher: each iteration draws ``n_questions`` RL questions, samples
    ``group`` rollouts of each (the group), scores them (1 = right answer), and takes ``epochs``
    gradient steps on the token-level clipped surrogate with group-relative advantages; groups
    whose rewards are all equal carry no signal (DAPO's dynamic sampling drops them).
    ``reward_noise``: the control in which the reward is a fair coin, unrelated to the answer.
    Returns the mean training reward per iteration."""
    opt = Adam(policy.parameters(), lr=lr)
    curve = []
    n_all = len(questions["site"])
    for _ in range(iterations):
        q = rng.choice(n_all, size=n_questions, replace=n_questions > n_all)
        idx = np.repeat(q, group)
        ro = rollout(policy, lay, sites, questions, idx, max_steps, gen)
        r = torch.as_tensor(ro["reward"])
        curve.append(float(r.mean()))
        if reward_noise:
            r = torch.as_tensor(rng.integers(0, 2, size=len(idx)).astype(np.float32))
        adv = group_advantages(r, torch.as_tensor(np.repeat(np.arange(n_questions), group)))
        keep = adv.abs() > 0
        if not keep.any():
            continue
        obs, act, old, live = ro["obs"][keep], ro["act"][keep], ro["logp"][keep], ro["live"][keep]
        a = adv[keep]
        for _ in range(epochs):
            n, t = act.shape
            logits = policy(obs.reshape(n * t, -1))
            new = torch.log_softmax(logits, 1).gather(1, act.reshape(-1, 1))[:, 0].reshape(n, t)
            loss = clipped_surrogate(new, old, a, clip, mask=live, clip_high=clip_high)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return curve


def state_bytes(policy: Policy) -> bytes:
    import io

    buf = io.BytesIO()
    torch.save(policy.state_dict(), buf)
    return buf.getvalue()


def load_state(policy: Policy, data: bytes) -> Policy:
    import io

    policy.load_state_dict(torch.load(io.BytesIO(data), weights_only=True))
    return policy


def save_files(policy: Policy, folder) -> dict:
    """``weights.pt`` (the state dict) and ``config.json`` (the sizes) in ``folder``: save_pyfunc's artifacts."""
    import json
    from pathlib import Path

    folder = Path(folder)
    (folder / "weights.pt").write_bytes(state_bytes(policy))
    (folder / "config.json").write_text(json.dumps(policy.config, sort_keys=True, indent=1))
    return {"weights": folder / "weights.pt", "config": folder / "config.json"}


def load_files(weights: str, config: str) -> Policy:
    import json
    from pathlib import Path

    return load_state(Policy(**json.loads(Path(config).read_text())), Path(weights).read_bytes())


def split_data(d: dict) -> tuple[dict, dict, dict]:
    """One seed's arrays (prepare.build) as (sites by split, questions by split, trajectories: the
    cold start's ``obs``/``act`` and the equal-data arm's ``eq_obs``/``eq_act``)."""
    sites = {s: {"label": d[f"{s}_label"], "value": d[f"{s}_value"]} for s in ("train", "test")}
    qs = {s: {k: d[f"{s}_{k}"] for k in ("site", "target", "depth", "answer")} for s in ("sft", "rl", "test")}
    return sites, qs, {"obs": d["traj_obs"], "act": d["traj_act"], "eq_obs": d["eq_obs"], "eq_act": d["eq_act"]}


def load_data(path, seed: int) -> tuple[dict, dict, dict]:
    """Seed ``seed``'s part of the prepared npz (keys ``<seed>/<name>``), as :func:`split_data`."""
    pre = f"{seed}/"
    with np.load(path) as z:
        d = {k[len(pre):]: z[k] for k in z.files if k.startswith(pre)}
    if not d:
        raise KeyError(f"{path} holds no data for seed {seed}: run the prepare stage for this profile's seeds")
    return split_data(d)
