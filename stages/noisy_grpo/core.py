"""noisy_grpo core: the synthetic vision-and-reasoning task, the tiny policy, and the RL loop
(GRPO, NoisyGRPO and its two ablations), on top of the shared policy-gradient core
(stages/common/pg.py). What is specific to the paper lives here: the per-rollout noise schedule and
the Bayesian advantage (:func:`gaussian_posterior_mean`, :func:`bayesian_advantages`).

Task: a ``grid`` x ``grid`` image with a few coloured cells (3 colours, one channel each) and a
question token (which colour to count). The policy writes a chain of 3 tokens (the count of each
colour it reads) and then the answer (the count of the asked colour); reward 1 for a right answer.
In distribution every pixel is 0 or 1; out of distribution the objects are dimmed and every pixel
is corrupted by sensor noise, so no OOD image has its pixels in {0, 1} (verifiably disjoint).
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

N_COLOURS = 3
CHAIN = N_COLOURS + 1        # three counts, then the answer


# ----------------------------------------------------------------------------------------- data
def make_images(n: int, grid: int, max_per_colour: int, rng: np.random.Generator, ood: bool = False,
                dim_range: tuple[float, float] = (0.5, 0.8), pixel_noise: float = 0.3):
    """``n`` images (n x 3 x grid x grid, float32), their per-colour counts (n x 3) and questions (n).
    ``ood``: objects dimmed to an intensity in ``dim_range`` and every pixel corrupted by Gaussian
    noise of standard deviation ``pixel_noise`` (a sensor shift never seen in the training data)."""
    if grid < 2 or max_per_colour < 1 or N_COLOURS * max_per_colour > grid * grid:
        raise ValueError(f"grid {grid} cannot hold {N_COLOURS} x {max_per_colour} objects")
    img = np.zeros((n, N_COLOURS, grid * grid), np.float32)
    counts = rng.integers(0, max_per_colour + 1, size=(n, N_COLOURS))
    for i in range(n):
        cells = rng.permutation(grid * grid)
        k = 0
        for c in range(N_COLOURS):
            for _ in range(counts[i, c]):
                img[i, c, cells[k]] = rng.uniform(*dim_range) if ood else 1.0
                k += 1
    if ood:
        img += (pixel_noise * rng.standard_normal(img.shape)).astype(np.float32)
    questions = rng.integers(0, N_COLOURS, size=n)
    return img.reshape(n, N_COLOURS, grid, grid), counts.astype(np.int64), questions.astype(np.int64)


def true_chain(counts: np.ndarray, questions: np.ndarray) -> np.ndarray:
    """The right chain: the three counts, then the asked colour's count (n x 4)."""
    return np.concatenate([counts, counts[np.arange(len(counts)), questions][:, None]], axis=1)


def noisy_chains(counts: np.ndarray, questions: np.ndarray, p_wrong: float, max_count: int,
                 rng: np.random.Generator) -> np.ndarray:
    """SFT chains, a fraction ``p_wrong`` of them with one count misread by +-1 (the answer then
    follows the wrong reading): a partly wrong warm-up set."""
    chain = true_chain(counts, questions).copy()
    for i in np.flatnonzero(rng.random(len(chain)) < p_wrong):
        c = rng.integers(0, N_COLOURS)
        v = chain[i, c]
        chain[i, c] = v + (1 if v == 0 else -1 if v == max_count else rng.choice([-1, 1]))
        chain[i, 3] = chain[i, questions[i]]
    return chain


# ---------------------------------------------------------------------------------------- model
class Policy(nn.Module):
    """Image encoder (MLP) + question and token embeddings + a causal transformer layer.
    Sequence: [image, question, BOS, t1, t2, t3]; the last 4 positions predict t1..t4."""

    def __init__(self, grid: int, vocab: int, d_model: int = 48, n_layers: int = 1, n_heads: int = 2):
        super().__init__()
        self.vocab = vocab
        self.enc = nn.Sequential(nn.Linear(N_COLOURS * grid * grid, d_model), nn.ReLU(), nn.Linear(d_model, d_model))
        self.q = nn.Embedding(N_COLOURS, d_model)
        self.tok = nn.Embedding(vocab + 1, d_model)          # + BOS
        self.pos = nn.Parameter(torch.zeros(2 + CHAIN, d_model))
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 2 * d_model, dropout=0.0, batch_first=True)
        self.tr = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab)
        L = 2 + CHAIN
        self.register_buffer("mask", torch.triu(torch.full((L, L), float("-inf")), diagonal=1), persistent=False)

    def forward(self, img: torch.Tensor, q: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor:
        """Logits (batch x prefix_len+1 x vocab) for the tokens after BOS, t1, ...: ``prefix`` holds
        the chain tokens written so far (batch x k, k in 0..3)."""
        b = prefix.shape[0]
        bos = torch.full((b, 1), self.vocab, dtype=torch.long)
        x = torch.cat([self.enc(img.flatten(1))[:, None], self.q(q)[:, None], self.tok(torch.cat([bos, prefix], 1))], 1)
        n = x.shape[1]
        h = self.tr(x + self.pos[:n], mask=self.mask[:n, :n], is_causal=True)
        return self.head(h[:, 2:])

    def chain_logp(self, img, q, chain) -> torch.Tensor:
        """log pi of each chain token (batch x 4) given the image and question."""
        logits = self.forward(img, q, chain[:, :-1])
        return torch.log_softmax(logits, -1).gather(-1, chain[..., None])[..., 0]

    @torch.no_grad()
    def sample(self, img, q, gen: torch.Generator, greedy: bool = False) -> torch.Tensor:
        """A chain for each row, batched: one forward per token for the whole batch."""
        prefix = torch.zeros((img.shape[0], 0), dtype=torch.long)
        for _ in range(CHAIN):
            logits = self.forward(img, q, prefix)[:, -1]
            nxt = logits.argmax(-1) if greedy else torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)[:, 0]
            prefix = torch.cat([prefix, nxt[:, None]], 1)
        return prefix


# ------------------------------------------------------------------------- the paper's advantage
def gaussian_posterior_mean(prior_mean, prior_var, obs, obs_var):
    """Posterior mean of a Gaussian mean under a Gaussian prior N(prior_mean, prior_var) after one
    observation ``obs`` with noise variance ``obs_var``:
    (prior_mean / prior_var + obs / obs_var) / (1 / prior_var + 1 / obs_var). Element-wise."""
    prior_var = torch.as_tensor(prior_var, dtype=torch.float32)
    obs_var = torch.as_tensor(obs_var, dtype=torch.float32)
    if (prior_var <= 0).any() or (obs_var <= 0).any():
        raise ValueError("prior_var and obs_var must be > 0")
    w = prior_var / (prior_var + obs_var)             # the weight of the observation
    return w * torch.as_tensor(obs, dtype=torch.float32) + (1 - w) * torch.as_tensor(prior_mean, dtype=torch.float32)


def bayesian_advantages(rewards, sigmas, groups, sigma_ref: float, prior_var: float, obs_var: float):
    """NoisyGRPO's advantage as we read it: each trajectory's value is the posterior that fuses a
    prior from its noise level (mean 1 - sigma / sigma_ref: a cleaner view is expected to give a
    more grounded trajectory) with its observed reward (the likelihood); the advantage is that
    posterior, centred and scaled within the group (pg.group_advantages)."""
    from stages.common.pg import group_advantages

    if sigma_ref <= 0:
        raise ValueError(f"sigma_ref must be > 0, got {sigma_ref}")
    sigmas = torch.as_tensor(sigmas, dtype=torch.float32)
    if (sigmas < 0).any():
        raise ValueError("noise levels must be >= 0")
    post = gaussian_posterior_mean(1.0 - sigmas / sigma_ref, prior_var, rewards, obs_var)
    return group_advantages(post, groups)


def noise_schedule(step: int, n_steps: int, sigma_start: float, sigma_end: float) -> float:
    """The largest noise level at RL step ``step``: linear from ``sigma_start`` to ``sigma_end``."""
    if n_steps < 1 or step < 0:
        raise ValueError(f"need n_steps >= 1 and step >= 0, got {n_steps}, {step}")
    return sigma_start + (sigma_end - sigma_start) * min(step / max(n_steps - 1, 1), 1.0)


# ------------------------------------------------------------------------------------- training
def sft(policy: Policy, img, q, chain, steps: int, batch: int, lr: float, gen: torch.Generator) -> list[float]:
    """Cross-entropy warm-up on (image, question, chain)."""
    from stages.common.optim import Adam

    opt = Adam(policy.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, len(img), (batch,), generator=gen)
        loss = -policy.chain_logp(img[idx], q[idx], chain[idx]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


METHODS = {            # name: (noise in rollouts, Bayesian advantage)
    "grpo": (False, False),
    "noisy_grpo": (True, True),
    "noise_only": (True, False),
    "bayes_only": (False, True),
}


def rl(policy: Policy, ref: Policy, img, q, counts, method: str, steps: int, prompts: int, group: int,
       lr: float, clip: float, beta: float, epochs: int, sigma_start: float, sigma_end: float,
       prior_var: float, obs_var: float, gen: torch.Generator, score_on_noisy: bool = False) -> list[float]:
    """GRPO-family RL. Rollouts of a group see the image with each its own noise level sigma ~
    U(0, schedule(step)) when the method injects noise; the update scores the sampled chains on the
    clean image (the policy being trained: the paper injects noise into the rollouts' visual input
    only, and optimises the policy on the original image), with the clipped surrogate and a k3 KL to
    ``ref``. ``score_on_noisy=True`` (the first, failing default run) scored them on the noisy view."""
    from stages.common.optim import Adam
    from stages.common.pg import clipped_surrogate, group_advantages, kl_k3

    noise, bayes = METHODS[method]
    opt = Adam(policy.parameters(), lr=lr)
    groups = torch.arange(prompts).repeat_interleave(group)
    curve = []
    for t in range(steps):
        idx = torch.randint(0, len(img), (prompts,), generator=gen).repeat_interleave(group)
        clean, qq = img[idx], q[idx]
        smax = noise_schedule(t, steps, sigma_start, sigma_end)
        sig = torch.rand(len(idx), generator=gen) * smax if noise else torch.zeros(len(idx))
        seen = clean + sig[:, None, None, None] * torch.randn(clean.shape, generator=gen)
        chain = policy.sample(seen, qq, gen)
        reward = (chain[:, 3] == counts[idx, qq]).float()
        adv = (bayesian_advantages(reward, sig, groups, max(sigma_start, sigma_end, 1e-6), prior_var, obs_var)
               if bayes else group_advantages(reward, groups))
        view = seen if score_on_noisy else clean
        with torch.no_grad():
            old = policy.chain_logp(view, qq, chain)
            ref_lp = ref.chain_logp(view, qq, chain)
        for _ in range(epochs):
            new = policy.chain_logp(view, qq, chain)
            loss = clipped_surrogate(new, old, adv, clip, mask=torch.ones_like(new, dtype=torch.bool)) + beta * kl_k3(new, ref_lp)
            opt.zero_grad()
            loss.backward()
            opt.step()
        curve.append(float(reward.mean()))
    return curve


@torch.no_grad()
def correct(policy: Policy, img, q, counts, gen: torch.Generator) -> np.ndarray:
    """Per-instance correctness (0/1) of the greedy answer."""
    chain = policy.sample(img, q, gen, greedy=True)
    return (chain[:, 3] == counts[torch.arange(len(q)), q]).numpy().astype(np.float64)
