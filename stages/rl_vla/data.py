"""The rl_vla study's data draws, shared by its stages (prepare writes the SFT demonstrations and
the evaluation episodes; train draws the control's demonstrations again): which reset seeds each
verdict seed uses, and the expert episodes made from them."""
from __future__ import annotations

FIELDS = ("image", "instruction", "action")


def demo_seed0(seed: int) -> int:
    return 10_000 * (seed + 1)


def more_seed0(seed: int) -> int:
    return 2 * 10**8 + 10**6 * seed


def eval_seeds(seed: int, n: int) -> dict:
    """Reset seeds per split: disjoint from the demonstrations' (which start at 10_000 (seed + 1)
    and 2e8 + 1e6 seed)."""
    base = 10**9 + 10**6 * seed
    from .env import SPLITS

    return {s: [base + 10_000 * i + k for k in range(n)] for i, s in enumerate(SPLITS)}


def sft_demos(p, seed: int) -> dict:
    """The seed's SFT data: ``n_demos`` expert episodes of the training split."""
    from .env import expert_demos

    return expert_demos(p.prepare.n_demos, demo_seed0(seed), p.env.model_dump())


def more_demos(p, seed: int) -> tuple[dict, int]:
    """The control's further data and its episode count: fresh expert episodes of the training
    split, in chunks of 16 episodes, until at least ``more_demo_steps`` environment steps (the RL
    arms' budget; the last chunk overshoots it by at most 16 episodes)."""
    import numpy as np

    from .env import expert_demos

    env_kw, budget = p.env.model_dump(), p.prepare.more_demo_steps
    chunks, steps, n = [], 0, 0
    while steps < budget:
        c = expert_demos(16, more_seed0(seed) + n, env_kw)
        n += 16
        chunks.append(c)
        steps += len(c["action"])
    return {k: np.concatenate([c[k] for c in chunks]) for k in FIELDS}, n
