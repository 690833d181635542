"""sepo's masked discrete diffusion model over short DNA-like sequences, and its exact distribution.

Tokens 0..3 are A, C, G, T; 4 is MASK. The denoiser is a time-free MLP (as in the DRAKES/MDLM
config the released SEPO code fine-tunes): a one-hot partial sequence in, four logits a position out.
The sampler is the many-step limit of the MDLM sampler: start all masked, unmask one uniformly
chosen masked position a step, its token drawn from the model's conditional. Because the sequences
are short, the sampler's output distribution is computed exactly (:func:`exact_distribution`): one
forward pass over all 5^L partial sequences and a dynamic programme over the unmasking paths.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

ALPHABET = "ACGT"
MASK = 4


class Denoiser(nn.Module):
    """p_theta(x_l = v | partial x) for every position l: an MLP over the one-hot partial sequence."""

    def __init__(self, length: int, hidden: int, layers: int = 2):
        super().__init__()
        self.length, self.hidden, self.layers = length, hidden, layers
        dims = [length * 5] + [hidden] * layers
        mods: list[nn.Module] = []
        for a, b in zip(dims[:-1], dims[1:]):
            mods += [nn.Linear(a, b), nn.SiLU()]
        mods.append(nn.Linear(dims[-1], length * 4))
        self.net = nn.Sequential(*mods)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """log-probabilities [n, L, 4] of the clean token at each position, given partial ``z`` [n, L]."""
        h = nn.functional.one_hot(z, 5).float().flatten(1)
        return torch.log_softmax(self.net(h).view(-1, self.length, 4), dim=-1)


def config(model: Denoiser) -> dict:
    return {"length": model.length, "hidden": model.hidden, "layers": model.layers}


def masked_loss(model: Denoiser, x: torch.Tensor, gen: torch.Generator, weights: torch.Tensor | None = None) -> torch.Tensor:
    """The discrete-time masked-diffusion ELBO of the random-order sampler (an upper bound on -log p):
    m ~ U{1..L} positions masked at random, L/m * sum over the masked of -log p(x_l | rest).
    ``weights`` (one a sequence, mean 1) gives reward-weighted fine-tuning's weighted loss."""
    n, length = x.shape
    m = torch.randint(1, length + 1, (n, 1), generator=gen)
    ranks = torch.rand(n, length, generator=gen).argsort(dim=1).argsort(dim=1)
    masked = ranks < m
    z = torch.where(masked, torch.full_like(x, MASK), x)
    logp = model(z).gather(-1, x.unsqueeze(-1)).squeeze(-1)
    per = -(logp * masked).sum(1) * length / m.squeeze(1)
    if weights is not None:
        per = per * weights
    return per.mean()


@torch.no_grad()
def sample(model: Denoiser, n: int, gen: torch.Generator) -> torch.Tensor:
    """``n`` sequences [n, L] from the random-order one-token-a-step sampler."""
    length = model.length
    z = torch.full((n, length), MASK, dtype=torch.long)
    order = torch.rand(n, length, generator=gen).argsort(dim=1)
    rows = torch.arange(n)
    for step in range(length):
        pos = order[:, step]
        probs = model(z)[rows, pos].exp()
        z[rows, pos] = torch.multinomial(probs, 1, generator=gen).squeeze(1)
    return z


def all_sequences(length: int) -> np.ndarray:
    """Every sequence of {0..3}^L [4^L, L], in base-4 order (position 0 most significant)."""
    idx = np.arange(4 ** length)
    return np.stack([(idx // 4 ** (length - 1 - j)) % 4 for j in range(length)], axis=1)


def seq_index(x: np.ndarray) -> np.ndarray:
    """The base-4 index of each sequence of ``x`` [n, L] in :func:`all_sequences`."""
    length = x.shape[1]
    return (np.asarray(x) * 4 ** np.arange(length - 1, -1, -1)).sum(1)


_PATHS: dict[int, tuple] = {}


def _unmasking_paths(length: int) -> tuple:
    """The dynamic programme's index arrays for sequences of ``length`` (computed once a length):
    the partial sequences as digits [5^L, L] (4 = MASK), and per number of masks m (L .. 1) and
    position l the states with l masked (``sl``) and their children's indices per revealed value."""
    if length not in _PATHS:
        n_states = 5 ** length
        pw = 5 ** np.arange(length - 1, -1, -1)
        digits = (np.arange(n_states)[:, None] // pw) % 5                  # [5^L, L], 4 = MASK
        n_masked = (digits == MASK).sum(1)
        steps = []
        for m in range(length, 0, -1):
            s = np.flatnonzero(n_masked == m)
            for l in range(length):
                sl = s[digits[s, l] == MASK]
                steps.append((m, l, sl, [sl - (MASK - v) * pw[l] for v in range(4)]))
        _PATHS[length] = (digits, steps, np.flatnonzero(n_masked == 0))
    return _PATHS[length]


@torch.no_grad()
def exact_distribution(model: Denoiser, chunk: int = 1 << 16) -> np.ndarray:
    """The sampler's exact output distribution over {0..3}^L, in :func:`all_sequences` order.

    f(s), the probability that the sampler passes through partial sequence s, obeys
    f(all masked) = 1 and f(s with position l revealed as v) += f(s) * p(v | s, l) / #masked(s);
    the probabilities of the full sequences are f at the states with no mask."""
    length = model.length
    digits, steps, full = _unmasking_paths(length)
    n_states = len(digits)
    logp = np.empty((n_states, length, 4), dtype=np.float64)
    for a in range(0, n_states, chunk):
        logp[a:a + chunk] = model(torch.from_numpy(digits[a:a + chunk])).double().numpy()
    probs = np.exp(logp)
    probs /= probs.sum(-1, keepdims=True)                               # float32 softmax, renormalised in float64
    f = np.zeros(n_states)
    f[n_states - 1] = 1.0                                                # all masked: every digit 4
    for m, l, sl, children in steps:
        for v, child in enumerate(children):
            f[child] += f[sl] * probs[sl, l, v] / m                     # children distinct per (l, v)
    return f[full]                                                       # increasing = base-4 order


def kl(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p || q) over a finite set, 0 log 0 = 0."""
    nz = p > 0
    return float(np.sum(p[nz] * (np.log(p[nz]) - np.log(q[nz]))))


def markov_data(n: int, length: int, alpha: float, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` sequences of an order-1 Markov chain on ACGT with Dirichlet(alpha) rows and a Dirichlet(1)
    start; returns (sequences, start probabilities, transition matrix)."""
    start = rng.dirichlet(np.ones(4))
    trans = rng.dirichlet(np.full(4, alpha), size=4)
    x = np.empty((n, length), dtype=np.int64)
    x[:, 0] = rng.choice(4, size=n, p=start)
    cum = trans.cumsum(1)
    for j in range(1, length):
        u = rng.random(n)
        x[:, j] = np.minimum((u[:, None] > cum[x[:, j - 1]]).sum(1), 3)
    return x, start, trans


def markov_probs(length: int, start: np.ndarray, trans: np.ndarray) -> np.ndarray:
    """The Markov chain's exact distribution over {0..3}^L (all_sequences order)."""
    seqs = all_sequences(length)
    p = start[seqs[:, 0]]
    for j in range(1, length):
        p = p * trans[seqs[:, j - 1], seqs[:, j]]
    return p


def motif_reward(x: np.ndarray, motif: str, partial_weight: float) -> np.ndarray:
    """Non-differentiable motif reward: exact occurrences of ``motif`` (overlaps count) plus
    ``partial_weight`` x the best number of matching letters over all placements."""
    x = np.asarray(x)
    mot = np.array([ALPHABET.index(c) for c in motif])
    k, length = len(mot), x.shape[1]
    if k > length:
        raise ValueError(f"motif {motif!r} is longer than the sequences ({length})")
    matches = np.stack([(x[:, i:i + k] == mot).sum(1) for i in range(length - k + 1)], axis=1)
    return (matches == k).sum(1) + partial_weight * matches.max(1)


def sample_strings(model: Denoiser, n: int, seed: int) -> list[str]:
    """``n`` sampled sequences as ACGT strings, from ``seed``."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    x = sample(model, n, torch.Generator().manual_seed(seed)).numpy()
    return ["".join(ALPHABET[v] for v in row) for row in x]


def save_model(target, model: Denoiser, name: str, example) -> None:
    """The model as an MLflow pyfunc folder (stages/common/mlmodel.save_pyfunc) at ``target``, with
    ``example`` (a DataFrame of ``seed``, ``n``: sampling requests) as its input example, from which
    MLflow infers its signature."""
    import json
    import tempfile
    from pathlib import Path

    from stages.common.mlmodel import save_pyfunc

    with tempfile.TemporaryDirectory() as tmp:
        w, c = Path(tmp) / "weights.pt", Path(tmp) / "config.json"
        torch.save(model.state_dict(), w)
        c.write_text(json.dumps({**config(model), "name": name}))
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": w, "config": c},
                    input_example=example)


def load_model(weights, cfg) -> Denoiser:
    import json
    from pathlib import Path

    c = json.loads(Path(cfg).read_text())
    model = Denoiser(c["length"], c["hidden"], c["layers"])
    model.load_state_dict(torch.load(weights, weights_only=True))
    return model.eval()
