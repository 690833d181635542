"""rl_vla prepare: the scripted expert's demonstrations (SFT data) and the evaluation episodes.

Demonstrations: ``n_demos`` expert episodes of the training split (reset seeds from the study seed).
Evaluation: ``n_eval`` reset seeds per split (train, visual, semantic, execution, unseen_word), from a
range no training episode uses; every method is evaluated on the same episodes (paired). The
prepare report checks that the splits are what they claim: the shifted splits' episode specs
(target pair, table colour, gripper start row, perturbation, texture) never occur in the training
split's (demonstrations and in-distribution evaluation episodes), and the expert solves every split.

Outputs: data/rl_vla/demos.npz, data/rl_vla/episodes.json, reports/rl_vla/prepare.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DEMOS, EPISODES, PREPARE_METRICS

SHIFTS = ("visual", "semantic", "execution", "unseen_word")


def eval_seeds(seed: int, n: int) -> dict:
    """Reset seeds per split: disjoint from the demonstrations' (which start at 10_000 (seed + 1))."""
    base = 10**9 + 10**6 * seed
    from .env import SPLITS

    return {s: [base + 10_000 * i + k for k in range(n)] for i, s in enumerate(SPLITS)}


def specs(split: str, seeds, env_kw: dict) -> list[tuple]:
    from .env import PickPlaceEnv, episode_spec

    env = PickPlaceEnv(split=split, **env_kw)
    out = []
    for s in seeds:
        env.reset(seed=int(s))
        out.append(episode_spec(env.ep))
    return out


def expert_success(split: str, seeds, env_kw: dict) -> float:
    from .env import PickPlaceEnv

    env = PickPlaceEnv(split=split, **env_kw)
    wins = 0
    for s in seeds:
        env.reset(seed=int(s))
        done, r = False, 0.0
        while not done:
            _, r, term, trunc, _ = env.step(env.expert_action())
            done = term or trunc
        wins += r > 0
    return wins / len(seeds)


def main() -> None:
    with stage("rl_vla", "prepare", PARAMS) as ctx:
        import json

        from stages.common.io import write_json, write_npz, write_text

        from .env import expert_demos

        env_kw = ctx.params.env.model_dump()
        p = ctx.params.prepare
        seed0 = 10_000 * (ctx.seed + 1)
        data = expert_demos(p.n_demos, seed0, env_kw)
        write_npz(ctx.path(DEMOS), data)
        seeds = eval_seeds(ctx.seed, p.n_eval)
        train_specs = set(specs("train", range(seed0, seed0 + p.n_demos), env_kw)) | set(specs("train", seeds["train"], env_kw))
        report = {"demo_episodes": p.n_demos, "demo_steps": int(len(data["action"])), "eval_episodes_per_split": p.n_eval}
        for s in SHIFTS:
            shifted = specs(s, seeds[s], env_kw)
            report[f"{s}_specs_in_train"] = sum(sp in train_specs for sp in shifted)
        for s in seeds:
            report[f"expert_success.{s}"] = expert_success(s, seeds[s], env_kw)
        write_text(ctx.path(EPISODES), json.dumps({"seeds": seeds}, indent=1) + "\n")
        write_json(ctx.path(PREPARE_METRICS), report)
        print(f"  {p.n_demos} demos ({len(data['action'])} steps); shifted specs found in train: "
              f"{[report[f'{s}_specs_in_train'] for s in SHIFTS]}", flush=True)


if __name__ == "__main__":
    main()
