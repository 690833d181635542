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
                 rng: np.random.Generator, clipped: bool = False) -> np.ndarray:
    """SFT chains, a fraction ``p_wrong`` of them with one count misread by +-1 (the answer then
    follows the wrong reading): a partly wrong warm-up set. ``clipped=True`` is the first version
    (before commit 03f98c8, which the study's first default run, "run A", used): the misread
    was clipped into [0, max_count], so a misread of a 0 down or of a max_count up changed nothing
    and fewer chains were wrong (README, "The SFT gap")."""
    chain = true_chain(counts, questions).copy()
    for i in np.flatnonzero(rng.random(len(chain)) < p_wrong):
        c = rng.integers(0, N_COLOURS)
        v = chain[i, c]
        if clipped:
            chain[i, c] = np.clip(v + rng.choice([-1, 1]), 0, max_count)
        else:
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


# ------------------------------------------------------------------------ one verdict seed, whole
DATA_KEYS = ("img", "counts", "q", "chain", "id_img", "id_counts", "id_q", "ood_img", "ood_counts", "ood_q")


def policy_frame(img, q):
    """Images ``img`` (n, 3, grid, grid) and questions ``q`` as the frame the MLflow policy takes
    (pyfunc.py): ``q`` (int64) and ``p0`` .. ``p{3*grid*grid-1}`` (the image, channel-major, float64:
    the signature's type, which float32 columns are widened to without loss)."""
    import pandas as pd

    img = np.asarray(img, dtype=np.float64).reshape(len(img), -1)
    return pd.concat([pd.DataFrame({"q": np.asarray(q, dtype=np.int64)}),
                      pd.DataFrame(img, columns=[f"p{i}" for i in range(img.shape[1])])], axis=1)


def make_dataset(seed: int, pp) -> dict[str, np.ndarray]:
    """One seed's images (``pp``: the prepare params): train images with their partly wrong SFT
    chains, clean test images (``id_*``) and OOD test images (``ood_*``), all from ``rng([seed, 0])``
    (seed 0 draws the same data as the one-seed design did)."""
    rng = np.random.default_rng([seed, 0])
    img, cnt, q = make_images(pp.n_train, pp.grid, pp.max_per_colour, rng)
    chain = noisy_chains(cnt, q, pp.p_wrong, pp.max_per_colour, rng)
    ti, tc, tq = make_images(pp.n_test, pp.grid, pp.max_per_colour, rng)
    oi, oc, oq = make_images(pp.n_test, pp.grid, pp.max_per_colour, rng, ood=True,
                             dim_range=tuple(pp.ood_dim), pixel_noise=pp.ood_pixel_noise)
    return {"img": img, "counts": cnt, "q": q, "chain": chain, "id_img": ti, "id_counts": tc, "id_q": tq,
            "ood_img": oi, "ood_counts": oc, "ood_q": oq}


def train_seed(seed: int, d: dict, pp, p, progress: bool = True,
               score_on_noisy: bool = False) -> tuple[dict, dict, dict]:
    """SFT of one seed's policy on its data ``d``, then every method x replicate of RL from it (the
    same prompts per replicate for every method). Returns (state dicts: ``sft`` and
    ``method.replicate``; train figures; the loss and reward curves). ``score_on_noisy`` is
    :func:`rl`'s (True only for the calibration's prototype design). Every draw comes from generators seeded with ``seed``."""
    import copy
    import time

    img, q, cnt, chain = (torch.as_tensor(d[k]) for k in ("img", "q", "counts", "chain"))
    torch.manual_seed(seed)
    policy = Policy(pp.grid, pp.max_per_colour + 1, d_model=p.d_model)
    gen = torch.Generator().manual_seed(seed)
    losses = sft(policy, img, q, chain, p.sft_steps, p.sft_batch, p.sft_lr, gen)
    ref = copy.deepcopy(policy).requires_grad_(False)
    states, out = {"sft": copy.deepcopy(policy.state_dict())}, {"sft_loss_last": losses[-1]}
    curves = {"sft.loss": losses}
    t0 = time.perf_counter()
    for m in METHODS:
        for r in range(p.replicates):
            pol = copy.deepcopy(policy)
            g = torch.Generator().manual_seed(seed * 1000 + 1 + r)   # every method: the same prompts per replicate
            curve = rl(pol, ref, img, q, cnt, m, p.rl_steps, p.prompts, p.group, p.rl_lr, p.clip, p.beta,
                       p.epochs, p.sigma_start, p.sigma_end, p.prior_var, p.obs_var, g, score_on_noisy)
            curves[f"{m}.{r}.train_reward"] = curve
            states[f"{m}.{r}"] = pol.state_dict()
            out[f"{m}.{r}_train_reward_last"] = float(np.mean(curve[-max(1, len(curve) // 10):]))
            if progress:
                print(f"    seed {seed}: {m} replicate {r} done ({time.perf_counter() - t0:.1f}s)", flush=True)
    return states, out, curves


SHOWN = ("sft", "grpo", "noisy_grpo", "noise_only", "bayes_only")


def evaluate_seed(states: dict, d: dict, pp, p, level: float) -> dict:
    """One seed's figures: greedy accuracy of every method in and out of distribution (per test
    instance, averaged over the method's replicates), and the paired gains over GRPO (mean over the
    test instances, with the ``level`` t interval's low end ``*_low``)."""
    from stages.common.stats import t_interval

    gen = torch.Generator().manual_seed(0)          # greedy decoding draws nothing

    def load(state):
        pol = Policy(pp.grid, pp.max_per_colour + 1, d_model=p.d_model)
        pol.load_state_dict(state)
        return pol.eval()

    right = {}
    for m in SHOWN:
        keys = ["sft"] if m == "sft" else [f"{m}.{r}" for r in range(p.replicates)]
        for split in ("id", "ood"):
            right[m, split] = np.mean([correct(load(states[k]), torch.as_tensor(d[f"{split}_img"]),
                                               torch.as_tensor(d[f"{split}_q"]),
                                               torch.as_tensor(d[f"{split}_counts"]), gen) for k in keys], axis=0)
    acc = {f"{m}_{s}_acc": float(v.mean()) for (m, s), v in right.items()}
    gains = {}
    for m in ("noisy_grpo", "noise_only", "bayes_only"):
        for s in ("id", "ood"):
            gains[f"{m}_{s}_gain"] = t_interval(right[m, s] - right["grpo", s], level)
    gains["noisy_over_noise_only_ood"] = t_interval(right["noisy_grpo", "ood"] - right["noise_only", "ood"], level)
    return {**acc, **{k: v["mean"] for k, v in gains.items()},
            **{f"{k}_low": v["low"] for k, v in gains.items()},
            "id_loss": -gains["noisy_grpo_id_gain"]["mean"],
            "bayes_only_id_loss": -gains["bayes_only_id_gain"]["mean"]}
