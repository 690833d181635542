"""rl_vla prepare: per verdict seed, the scripted expert's demonstrations (SFT data), the further
demonstrations of the control ``sft_more``, and the evaluation episodes.

Every verdict seed of the profile (``ctx.seeds``) is one independent repetition of the whole
experiment, so each seed gets its own data: ``n_demos`` expert episodes of the training split (reset
seeds from 10_000 (seed + 1)), fresh expert episodes of the training split worth
``more_demo_steps`` environment steps (the RL arms' budget; reset seeds from 2e8 + 1e6 seed) for the
control ``sft_more``, and ``n_eval`` reset seeds per split (train, visual, semantic, execution,
unseen_word, from 1e9 + 1e6 seed), which every method of that seed is evaluated on (paired). The
prepare report checks per seed that the splits are what they claim: the shifted splits' episode
specs (target pair, table colour, gripper start row, perturbation, texture) never occur in the
training split's (demonstrations, the control's demonstrations and the in-distribution evaluation
episodes), and the expert solves every split.

The control's demonstrations (about 400 MB of pictures a seed) are not written: the train stage
draws them again with :func:`stages.rl_vla.data.more_demos` (the same reset seeds, a few CPU seconds a seed).

Outputs: data/rl_vla/demos.npz (keys ``<seed>/<field>``), data/rl_vla/episodes.json,
reports/rl_vla/prepare.json (per_seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .data import FIELDS, demo_seed0, eval_seeds, more_demos, more_seed0, sft_demos
from .params import PARAMS
from .paths import DEMOS, EPISODES, PREPARE_METRICS

SHIFTS = ("visual", "semantic", "execution", "unseen_word")


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


def prepare_seed(p, seed: int) -> tuple[dict, dict, dict, dict]:
    """One seed's (SFT demos, the control's demos, evaluation reset seeds per split, report)."""
    env_kw = p.env.model_dump()
    data, (more, n_more) = sft_demos(p, seed), more_demos(p, seed)
    seeds = eval_seeds(seed, p.prepare.n_eval)
    s0, m0 = demo_seed0(seed), more_seed0(seed)
    train_specs = (set(specs("train", range(s0, s0 + p.prepare.n_demos), env_kw))
                   | set(specs("train", range(m0, m0 + n_more), env_kw)) | set(specs("train", seeds["train"], env_kw)))
    report = {"demo_episodes": p.prepare.n_demos, "demo_steps": int(len(data["action"])),
              "more_demo_episodes": n_more, "more_demo_steps": int(len(more["action"])), "eval_episodes_per_split": p.prepare.n_eval}
    for s in SHIFTS:
        report[f"{s}_specs_in_train"] = sum(sp in train_specs for sp in specs(s, seeds[s], env_kw))
    for s in seeds:
        report[f"expert_success.{s}"] = expert_success(s, seeds[s], env_kw)
    return data, more, seeds, report


def main() -> None:
    with stage("rl_vla", "prepare", PARAMS) as ctx:
        import json

        from stages.common.io import write_json, write_npz, write_text
        from stages.common.seeds import per_seed_metrics

        arrays, episodes, reports = {}, {}, {}
        for seed in ctx.seeds:
            data, more, seeds, report = prepare_seed(ctx.params, seed)
            for k in FIELDS:
                arrays[f"{seed}/{k}"] = data[k]
            del more
            episodes[str(seed)] = seeds
            reports[seed] = report
            print(f"  seed {seed}: {report['demo_episodes']} demos ({report['demo_steps']} steps), control "
                  f"{report['more_demo_steps']} steps; shifted specs found in train: "
                  f"{[report[f'{s}_specs_in_train'] for s in SHIFTS]}", flush=True)
        write_npz(ctx.path(DEMOS), arrays)
        write_text(ctx.path(EPISODES), json.dumps({"seeds": episodes}, indent=1) + "\n")
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(reports))


if __name__ == "__main__":
    main()
