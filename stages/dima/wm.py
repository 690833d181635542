"""World models of the dima study: joint vs sequential (DIMA-style) conditioning on the actions.

Both predict y = [(s' - s) standardised, r standardised] from the standardised state s and the
agents' discrete actions, with plain MLPs (SiLU) sized to the same parameter count and trained
for the same Adam steps on the same batches.

* ``joint``: one pass, y_hat = f(s, onehot(a_1), ..., onehot(a_N)).
* ``seq`` (DIMA's mechanism, after arXiv 2505.20922 Sec. 4): a chain of K = N refinement steps
  with one shared network D. Step k sees the state, the current estimate x_k, ONE agent's action
  (onehot(a_pi(k))), that agent's id and the step's noise level sigma_k, and returns the
  estimate of y given the actions revealed so far: y_hat_k = D(s, x_k, a_pi(k), pi(k), sigma_k).
  Agents' actions are revealed one at a time, as the reverse process of a diffusion model reveals
  structure; the noise levels fall from sigma_1 = sigma_max to sigma_N = sigma_max / N (linear).
  Training ("denoising-style"): the chain is unrolled with noise injected at each step,
  x_1 = sigma_1 eps, x_{k+1} = y_hat_k + sigma_{k+1} eps, and every step regresses on y (each
  step's optimum is the conditional mean of y given the actions revealed so far); the agents'
  order pi is a fresh random permutation per row (the paper's permutation invariance). A
  ``denoise`` variant trains as denoising score matching does (x_k = y + sigma_k eps, teacher
  forced, one random step per row) and is reported as a calibration variant.
  Prediction: the noise-free chain x_1 = 0, x_{k+1} = y_hat_k, agents in index order.
"""
from __future__ import annotations

import numpy as np

from .env import N_ACTIONS

KINDS = ("joint", "seq", "joint_chain")
SEQ_TRAINING = ("chain", "denoise")


def mlp_params(in_dim: int, out_dim: int, hidden: int, layers: int) -> int:
    """Parameter count of an MLP with ``layers`` hidden layers of width ``hidden`` (biases included)."""
    return in_dim * hidden + hidden + (layers - 1) * (hidden * hidden + hidden) + hidden * out_dim + out_dim


def width_for(target: int, in_dim: int, out_dim: int, layers: int) -> int:
    """The hidden width whose MLP has the parameter count closest to ``target``."""
    return min(range(2, 4097), key=lambda h: abs(mlp_params(in_dim, out_dim, h, layers) - target))


def in_dims(n: int, d: int) -> dict[str, int]:
    return {"joint": d + n * N_ACTIONS, "seq": d + (d + 1) + N_ACTIONS + n + 1,
            "joint_chain": d + (d + 1) + n * N_ACTIONS + 1}


def sigmas(n: int, sigma_max: float) -> np.ndarray:
    """Noise level of each chain step, falling linearly from sigma_max to sigma_max / n."""
    return sigma_max * (n - np.arange(n)) / n


class Normaliser:
    """Standardisation of states and targets, fitted on the training transitions."""

    def __init__(self, s: np.ndarray, s2: np.ndarray, r: np.ndarray):
        ds = s2 - s
        self.s_mean, self.s_std = s.mean(0), np.maximum(s.std(0), 1e-3)
        self.d_mean, self.d_std = ds.mean(0), np.maximum(ds.std(0), 1e-3)
        self.r_mean, self.r_std = float(r.mean()), max(float(r.std()), 1e-3)

    def to_dict(self) -> dict:
        return {k: np.asarray(v).tolist() for k, v in vars(self).items()}

    @classmethod
    def from_dict(cls, d: dict) -> "Normaliser":
        obj = cls.__new__(cls)
        for k, v in d.items():
            setattr(obj, k, np.asarray(v, dtype=np.float64) if isinstance(v, list) else v)
        return obj

    def target(self, s, s2, r) -> np.ndarray:
        return np.concatenate([(s2 - s - self.d_mean) / self.d_std, ((r - self.r_mean) / self.r_std)[:, None]], 1)

    def decode(self, s: np.ndarray, y: np.ndarray):
        """(next state, reward) from a standardised prediction."""
        return s + self.d_mean + y[:, :-1] * self.d_std, self.r_mean + y[:, -1] * self.r_std


def build(kind: str, n: int, d: int, hidden: int, layers: int):
    import torch

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    mods, width = [], in_dims(n, d)[kind]
    for _ in range(layers):
        mods += [torch.nn.Linear(width, hidden), torch.nn.SiLU()]
        width = hidden
    mods.append(torch.nn.Linear(width, d + 1))
    return torch.nn.Sequential(*mods)


class WorldModel:
    """A trained model with its normaliser: ``predict(s, a)`` -> (s', r) in raw units."""

    def __init__(self, kind: str, n: int, d: int, hidden: int, layers: int, sigma_max: float, norm: Normaliser):
        self.kind, self.n, self.d, self.hidden, self.layers, self.sigma_max = kind, n, d, hidden, layers, sigma_max
        self.norm = norm
        self.net = build(kind, n, d, hidden, layers)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.net.parameters())

    def forward_std(self, s_std, a, order=None, noise=None, collect: bool = False):
        """Standardised prediction (B, d+1) from standardised states (B, d) and actions (B, n).
        ``order`` (B, n) is each row's agent order (default 0..n-1); ``noise`` a (n, B, d+1)
        tensor of injected noise (default none); ``collect`` returns every step's estimate."""
        import torch
        import torch.nn.functional as F

        oh = F.one_hot(a, N_ACTIONS).float()                     # (B, n, A)
        if self.kind == "joint":
            y = self.net(torch.cat([s_std, oh.flatten(1)], 1))
            return [y] if collect else y
        b = s_std.shape[0]
        sig = sigmas(self.n, self.sigma_max)
        if order is None:
            order = torch.arange(self.n).expand(b, self.n)
        x = torch.zeros(b, self.d + 1) if noise is None else sig[0] * noise[0]
        ids = torch.eye(self.n)
        rows = torch.arange(b)
        outs = []
        for k in range(self.n):
            ag = order[:, k]
            if self.kind == "joint_chain":     # ablation: the same chain, every step sees the joint action
                inp = torch.cat([s_std, x, oh.flatten(1), torch.full((b, 1), float(sig[k]))], 1)
            else:
                inp = torch.cat([s_std, x, oh[rows, ag], ids[ag], torch.full((b, 1), float(sig[k]))], 1)
            y = self.net(inp)
            outs.append(y)
            x = y if noise is None or k + 1 == self.n else y + float(sig[k + 1]) * noise[k + 1]
        return outs if collect else outs[-1]

    def predict(self, s: np.ndarray, a: np.ndarray):
        import torch

        s = np.atleast_2d(s)
        with torch.no_grad():
            y = self.forward_std(torch.as_tensor((s - self.norm.s_mean) / self.norm.s_std, dtype=torch.float32),
                                 torch.as_tensor(np.atleast_2d(a), dtype=torch.int64)).double().numpy()
        return self.norm.decode(s, y)

    def imagine(self, s0: np.ndarray, actions: np.ndarray):
        """Open-loop imagined rollout: states (B, H, d) and rewards (B, H) for actions (B, H, n)."""
        s, states, rews = np.atleast_2d(s0), [], []
        for h in range(actions.shape[1]):
            s, r = self.predict(s, actions[:, h])
            states.append(s)
            rews.append(r)
        return np.stack(states, 1), np.stack(rews, 1)

    def state_bytes(self) -> bytes:
        import io

        import torch

        buf = io.BytesIO()
        torch.save(self.net.state_dict(), buf)
        return buf.getvalue()

    def load_state_bytes(self, data: bytes) -> None:
        import io

        import torch

        self.net.load_state_dict(torch.load(io.BytesIO(data), weights_only=True))


def val_loss(model: "WorldModel", val: dict) -> float:
    """Held-out one-step loss of the noise-free prediction, in the standardised target space (the
    early-stopping criterion, the same for every kind of model)."""
    import torch

    xs = torch.as_tensor((val["s"] - model.norm.s_mean) / model.norm.s_std, dtype=torch.float32)
    ys = torch.as_tensor(model.norm.target(val["s"], val["s2"], val["r"]), dtype=torch.float32)
    with torch.no_grad():
        return float(((model.forward_std(xs, torch.as_tensor(val["a"], dtype=torch.int64)) - ys) ** 2).mean())


def train(kind: str, data: dict, n: int, target_params: int, layers: int, steps: int, batch: int, lr: float,
          sigma_max: float, seed: int, seq_training: str = "chain", progress: bool = False,
          val: dict | None = None, eval_every: int = 100, patience: int = 0, info: dict | None = None):
    """Fit a world model of ``kind`` on the transitions ``data`` (s, a, r, s2); returns (model, losses).
    The hidden width is chosen so the model has about ``target_params`` parameters.
    Early stopping (the same rule for every kind): with ``val`` (validation transitions), the
    held-out one-step loss (:func:`val_loss`) is taken every ``eval_every`` steps and the weights
    with the lowest one are kept; with ``patience`` > 0 training stops after that many checks
    without improvement. ``info`` (a dict) receives ``best_step`` and ``val_best``."""
    import torch
    from tqdm import tqdm

    from stages.common.optim import Adam

    if seq_training not in SEQ_TRAINING:
        raise ValueError(f"seq_training must be one of {SEQ_TRAINING}, got {seq_training!r}")
    if steps < 1 or batch < 1:
        raise ValueError(f"steps and batch must be >= 1, got {steps}, {batch}")
    s, a, r, s2 = data["s"], data["a"], data["r"], data["s2"]
    d = s.shape[1]
    if a.shape != (len(s), n):
        raise ValueError(f"actions must have shape ({len(s)}, {n}), got {a.shape}")
    norm = Normaliser(s, s2, r)
    hidden = width_for(target_params, in_dims(n, d)[kind], d + 1, layers)
    torch.manual_seed(seed)
    model = WorldModel(kind, n, d, hidden, layers, sigma_max, norm)
    opt = Adam(model.net.parameters(), lr=lr)
    xs = torch.as_tensor((s - norm.s_mean) / norm.s_std, dtype=torch.float32)
    ys = torch.as_tensor(norm.target(s, s2, r), dtype=torch.float32)
    acts = torch.as_tensor(a, dtype=torch.int64)
    gen = torch.Generator().manual_seed(seed + 1)
    sig = torch.as_tensor(sigmas(n, sigma_max), dtype=torch.float32)
    losses = []
    best = (float("inf"), 0, None)          # (validation loss, step, weights)
    since = 0
    for step in tqdm(range(steps), desc=f"dima: train {kind}", disable=not progress, mininterval=2):
        idx = torch.randint(0, len(xs), (batch,), generator=gen)
        sb, ab, yb = xs[idx], acts[idx], ys[idx]
        if kind == "joint":
            loss = ((model.forward_std(sb, ab) - yb) ** 2).mean()
        else:
            order = torch.argsort(torch.rand(batch, n, generator=gen), 1)
            if seq_training == "chain":
                noise = torch.randn(n, batch, d + 1, generator=gen)
                outs = model.forward_std(sb, ab, order=order, noise=noise, collect=True)
                loss = torch.stack([((o - yb) ** 2).mean() for o in outs]).mean()
            else:     # teacher-forced denoising: one random step per row, x_k = y + sigma_k eps
                k = torch.randint(0, n, (batch,), generator=gen)
                x = yb + sig[k][:, None] * torch.randn(batch, d + 1, generator=gen)
                ag = order[torch.arange(batch), k]
                import torch.nn.functional as F

                if kind == "joint_chain":
                    inp = torch.cat([sb, x, F.one_hot(ab, N_ACTIONS).float().flatten(1), sig[k][:, None]], 1)
                else:
                    inp = torch.cat([sb, x, F.one_hot(ab[torch.arange(batch), ag], N_ACTIONS).float(),
                                     torch.eye(n)[ag], sig[k][:, None]], 1)
                loss = ((model.net(inp) - yb) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if val is not None and ((step + 1) % eval_every == 0 or step + 1 == steps):
            v = val_loss(model, val)
            if v < best[0]:
                best, since = (v, step + 1, {k: w.detach().clone() for k, w in model.net.state_dict().items()}), 0
            else:
                since += 1
                if patience and since >= patience:
                    break
    if best[2] is not None:
        model.net.load_state_dict(best[2])
    if info is not None:
        info["best_step"], info["val_best"] = (best[1], best[0]) if best[2] is not None else (len(losses), float("nan"))
        info["steps_run"] = len(losses)
    return model, losses


def rollout_mse(model: WorldModel, data: dict, horizon: int, max_starts: int | None = None) -> np.ndarray:
    """Mean squared error of the imagined state (raw units, mean over state dims) at each horizon
    1..H, open loop with the logged actions, from every start t with t + H inside its episode."""
    ep, t = data["ep"], data["t"]
    starts = [i for i in range(len(ep)) if i + horizon <= len(ep) and ep[i + horizon - 1] == ep[i]
              and t[i + horizon - 1] == t[i] + horizon - 1]
    if max_starts is not None:
        starts = starts[:max_starts]
    if not starts:
        raise ValueError(f"no held-out window of {horizon} steps")
    st = np.asarray(starts)
    acts = np.stack([data["a"][st + h] for h in range(horizon)], 1)
    truth = np.stack([data["s2"][st + h] for h in range(horizon)], 1)
    pred, _ = model.imagine(data["s"][st], acts)
    return ((pred - truth) ** 2).mean(axis=(0, 2))


def reward_mse(model: WorldModel, data: dict) -> float:
    _, r = model.predict(data["s"], data["a"])
    return float(np.mean((r - data["r"]) ** 2))


def nest(flat: dict) -> dict:
    """{"a.b.c": v} -> {"a": {"b": {"c": v}}}: the metrics files' layout (claims read dotted paths)."""
    out: dict = {}
    for key, v in flat.items():
        cur = out
        *head, last = key.split(".")
        for part in head:
            cur = cur.setdefault(part, {})
            if not isinstance(cur, dict):
                raise ValueError(f"metric key {key!r} collides with a value at {part!r}")
        if last in cur:
            raise ValueError(f"metric key {key!r} given twice")
        cur[last] = v
    return out
