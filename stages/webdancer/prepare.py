"""webdancer prepare: (1) browsing data construction and (2) trajectory sampling.

Generates training and held-out websites (stages/webdancer/web.py), questions from them (a path of
topics to a page at depth 1..depth, the answer the page's fact): SFT questions and RL questions
(disjoint (site, page) pairs of the training sites, as the paper keeps its RL QA pairs out of SFT)
and test questions on the held-out sites, ``n_test_per_depth`` per depth. Then samples one
trajectory per SFT question with a noisy shortest-path oracle and keeps only those that end with
the right answer (rejection sampling). Checks that no held-out site equals a training site.

Outputs: data/webdancer/web.npz and reports/webdancer/prepare.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATA, PREPARE_METRICS


def build(env, p, seed: int) -> dict:
    """All arrays of the study's data, from ``seed``."""
    import numpy as np

    from .web import Layout, make_questions, make_sites, sample_trajectories

    lay = Layout(env.k, env.depth, env.n_topics, env.n_values)
    train = make_sites(lay, p.train_sites, np.random.default_rng([seed, 1]))
    test = make_sites(lay, p.test_sites, np.random.default_rng([seed, 2]))
    rng = np.random.default_rng([seed, 3])
    deep = np.flatnonzero(lay.page_depth >= 1)
    pairs = rng.choice(p.train_sites * len(deep), size=p.n_sft + p.n_rl, replace=p.n_sft + p.n_rl > p.train_sites * len(deep))
    site, page = pairs // len(deep), deep[pairs % len(deep)]
    out = {"train_label": train["label"], "train_value": train["value"], "test_label": test["label"], "test_value": test["value"]}
    for name, sl in (("sft", slice(0, p.n_sft)), ("rl", slice(p.n_sft, None))):
        out |= {f"{name}_site": site[sl], f"{name}_target": page[sl], f"{name}_depth": lay.page_depth[page[sl]],
                f"{name}_answer": train["value"][site[sl], page[sl]]}
    depths = np.repeat(np.arange(1, env.depth + 1), p.n_test_per_depth)
    q = make_questions(lay, test, rng.integers(0, p.test_sites, size=len(depths)), depths, rng)
    out |= {f"test_{k}": v for k, v in q.items()}
    sft_q = {k: out[f"sft_{k}"] for k in ("site", "target", "depth", "answer")}
    obs, act, info = sample_trajectories(lay, train, sft_q, p.noise, p.wrong_answer, env.max_steps, rng)
    out |= {"traj_obs": obs, "traj_act": act}
    # the equal-data SFT arm (the must's control): the same trajectory sampling and rejection on the
    # RL questions too (own stream: the cold start's data above stay as they were)
    rl_q = {k: out[f"rl_{k}"] for k in ("site", "target", "depth", "answer")}
    obs_rl, act_rl, info_rl = sample_trajectories(lay, train, rl_q, p.noise, p.wrong_answer, env.max_steps,
                                                  np.random.default_rng([seed, 4]))
    out |= {"eq_obs": np.concatenate([obs, obs_rl]), "eq_act": np.concatenate([act, act_rl])}
    out["_info"] = {**info, "rl_kept": info_rl["kept"], "rl_sampled": info_rl["sampled"]}
    return out


def main() -> None:
    with stage("webdancer", "prepare", PARAMS) as ctx:
        from stages.common.io import write_json, write_npz

        from stages.common.seeds import per_seed_metrics, run_seeds

        p, env = ctx.params.prepare, ctx.params.env
        arrays, reports = {}, {}

        def one(seed: int) -> dict:
            data = build(env, p, seed)
            info = data.pop("_info")
            tr = {a.tobytes() for a in data["train_label"]}
            shared_sites = sum(a.tobytes() in tr for a in data["test_label"])
            if shared_sites:
                raise RuntimeError(f"seed {seed}: {shared_sites} held-out sites equal a training site")
            sft_pairs = set(zip(data["sft_site"].tolist(), data["sft_target"].tolist()))
            rl_pairs = set(zip(data["rl_site"].tolist(), data["rl_target"].tolist()))
            arrays.update({f"{seed}/{k}": v for k, v in data.items()})
            print(f"  seed {seed}: kept {info['kept']}/{info['sampled']} trajectories ({info['steps']} SFT steps); "
                  f"equal-data arm: {info['kept'] + info['rl_kept']} trajectories, {len(data['eq_act'])} steps", flush=True)
            return {"trajectories_sampled": info["sampled"], "trajectories_kept": info["kept"], "sft_steps": info["steps"],
                    "kept_fraction": info["kept"] / info["sampled"], "sft_questions": p.n_sft, "rl_questions": p.n_rl,
                    "equal_data_steps": int(len(data["eq_act"])), "equal_data_kept_rl": info["rl_kept"],
                    "test_questions": int(len(data["test_site"])), "shared_sites_train_test": shared_sites,
                    "sft_rl_pairs_shared": len(sft_pairs & rl_pairs)}

        reports = run_seeds(ctx.seeds, one)
        write_npz(ctx.path(DATA), arrays)
        report = per_seed_metrics(reports)
        write_json(ctx.path(PREPARE_METRICS), report)
        ctx.run.log_metrics({k: float(v) for k, v in report.items() if isinstance(v, (int, float))})


if __name__ == "__main__":
    main()
