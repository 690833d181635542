"""repo_safety prepare: the contextual-bandit instances of the sweep over the harmful share f, for
every verdict seed.

A verdict seed is one independent repetition of the whole experiment: its own instances (and, in
train, its own sampled responses). For every seed of the profile (``ctx.seeds``), one instance per
f in ``prepare.fractions`` (generator: stages/repo_safety/bandit.py), each drawn from its own seeded
stream ([seed, round(1000 f)]: the one-seed study's stream, so seed 0 draws the instances it drew),
so adding an f or a seed leaves the others unchanged. Every instance is valid: lambda* > 0 (the expected-constraint baseline is
constrained) and the harmful prompts' cost/helpfulness correlation is in range; the invalid draws
that were regenerated are counted per reason.

The data are generated, not downloaded: the paper's data (PKU-SafeRLHF prompts scored by its
reward and cost models) are LLM text, which this bandit replaces by score tables.

Outputs: data/repo_safety/bandit (a Hugging Face datasets Dataset: one row per (seed, f, prompt)
with its helpfulness and cost lists), data/repo_safety/instances.json (beta, budget and, per seed,
each instance's lambda*, correlation, rejections), reports/repo_safety/prepare.json (per seed, in
the ``per_seed`` layout of stages/common/seeds.py).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .data import fraction_key
from .params import RepoSafetyParams
from .paths import DATASET, INSTANCES, PREPARE_METRICS


def build(p, seed: int) -> list:
    """The sweep's instances, in the order of ``p.fractions``."""
    import numpy as np

    from .bandit import generate

    return [generate(np.random.default_rng([seed, round(1000 * f)]), p, f) for f in p.fractions]


def summary(instances: list) -> dict:
    """What prepare.json reports of one seed's instances."""
    infos = {fraction_key(i.fraction): i.info for i in instances}
    rejected = {k: sum(i.info["rejected"][k] for i in instances) for k in ("zero_multiplier", "correlation")}
    return {"instances": infos, "rejected": rejected, "rejected_total": sum(rejected.values()),
            "min_lambda_star": min(i.info["lambda_star"] for i in instances),
            "correlations": [i.info["correlation"] for i in instances]}


def to_columns(by_seed: dict) -> dict:
    """Columns of the Dataset: one row per (seed, fraction, prompt)."""
    cols: dict = {"seed": [], "fraction": [], "prompt": [], "harmful": [], "reward": [], "cost": []}
    for seed, instances in by_seed.items():
        for inst in instances:
            for x in range(inst.n_prompts):
                cols["seed"].append(int(seed))
                cols["fraction"].append(float(inst.fraction))
                cols["prompt"].append(x)
                cols["harmful"].append(bool(inst.harmful[x]))
                cols["reward"].append(inst.reward[x].tolist())
                cols["cost"].append(inst.cost[x].tolist())
    return cols


def main() -> None:
    with stage("repo_safety", "prepare", RepoSafetyParams) as ctx:
        from datasets import Dataset

        from stages.common.io import atomic_dir, write_json
        from stages.common.seeds import per_seed_metrics

        p = ctx.params.prepare
        by_seed = {}
        for seed in ctx.seeds:
            by_seed[seed] = build(p, seed)
            for i in by_seed[seed]:
                print(f"seed {seed}, f={i.fraction:g}: {i.info['n_harmful']} harmful prompts, correlation "
                      f"{i.info['correlation']:.3f}, lambda* = {i.info['lambda_star']:.4f}, "
                      f"attempts {i.info['attempts']} (rejected {i.info['rejected']})", flush=True)
        with atomic_dir(ctx.path(DATASET)) as tmp:
            Dataset.from_dict(to_columns(by_seed)).save_to_disk(str(tmp))
        write_json(ctx.path(INSTANCES), {"beta": p.kl_beta, "budget": p.budget, "seeds": list(by_seed),
                                         "fractions": [float(f) for f in p.fractions],
                                         "instances": {str(s): {fraction_key(i.fraction): i.info for i in insts}
                                                       for s, insts in by_seed.items()}})
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(
            {s: summary(insts) for s, insts in by_seed.items()}, n_prompts=p.n_prompts, n_responses=p.n_responses))


if __name__ == "__main__":
    main()
