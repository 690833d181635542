"""mpo evaluate: the figures the claims read, the return-vs-noise plot and its table, and the two
registered policies rolled out in gymnasium's own Pendulum-v1.

Outputs: reports/mpo/metrics.json (what claims.yaml checks: the mean over the verdict seeds and
``per_seed``), reports/mpo/return_vs_noise.png and its data reports/mpo/return_vs_noise.csv (one row
per setting and method: the mean over the verdict seeds of each seed's mean test score, with a 90 %
t interval over the seeds).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import METRICS, MODELS, PLOT, PLOT_DATA, RESULTS

METHODS = {"dpo_b1": "DPO (beta=1)", "dpo_tuned": "DPO (beta tuned)", "cdpo_tuned": "cDPO (beta tuned)",
           "orpo_tuned": "ORPO (beta tuned)", "discovered": "discovered (CMA-ES)",
           "corner": "discovered beta, eps on the DPO/cDPO corner",
           "corner_search": "CMA-ES over the DPO/cDPO corner (control)"}


def gym_returns(folder, episodes: int, seed: int) -> list[float]:
    """Returns of a saved policy (sampled actions) in gymnasium.make("Pendulum-v1")."""
    import gymnasium as gym
    import numpy as np
    import torch

    from .po import TORQUES, load_policy

    pol = load_policy(str(folder / "artifacts" / "weights.pt"), str(folder / "artifacts" / "config.json"))
    rng = np.random.default_rng([seed, 17])
    env = gym.make("Pendulum-v1")
    out = []
    for ep in range(episodes):
        obs, _ = env.reset(seed=int(seed * 1000 + ep))
        total, done = 0.0, False
        while not done:
            with torch.no_grad():
                p = torch.softmax(pol(torch.from_numpy(obs[None].astype(np.float32))), 1)[0].double().numpy()
            a = int(rng.choice(len(p), p=p / p.sum()))
            obs, r, term, trunc, _ = env.step(np.array([TORQUES[a]], dtype=np.float32))
            total += float(r)
            done = term or trunc
        out.append(total)
    env.close()
    return out


def main() -> None:
    with stage("mpo", "evaluate", PARAMS) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.stats import t_interval

        from .experiment import claim_metrics
        from .po import normalised

        from stages.common.seeds import per_seed_metrics

        out = json.loads(ctx.path(RESULTS).read_text())
        flips, seeds = out["flips"], [str(s) for s in ctx.seeds]
        if sorted(out["seeds"]) != sorted(seeds):
            raise ValueError(f"results.json has seeds {sorted(out['seeds'])}, the profile {seeds}: rerun train")
        per = {int(s): claim_metrics(out["seeds"][s]["results"], flips, out["target_flip"]) for s in seeds}
        for s in seeds:
            per[int(s)]["discovered_loss"] = out["seeds"][s]["discovered"]
            per[int(s)]["corner_search_loss"] = out["seeds"][s]["corner_search"]
        rows = []
        for setting in out["seeds"][seeds[0]]["results"]:
            for key, label in METHODS.items():
                v = []
                for s in seeds:
                    r = out["seeds"][s]["results"][setting]
                    name = r["selected"][key[:-6] + "_"] if key.endswith("_tuned") else key
                    v.append(float(np.mean(r["test"][name])))
                ci = t_interval(v, 0.9) if len(v) > 1 else {"low": v[0], "high": v[0]}
                rows.append({"setting": setting, "flip": float(setting[4:]) if setting.startswith("flip") else None,
                             "method": label, "score": float(np.mean(v)),
                             "low": float(ci["low"]), "high": float(ci["high"])})
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, (ax, bx) = new_figure(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [3, 2]})
        for label in METHODS.values():
            pts = [r for r in rows if r["method"] == label and r["flip"] is not None]
            ax.errorbar([r["flip"] for r in pts], [r["score"] for r in pts],
                        yerr=[[r["score"] - r["low"] for r in pts], [r["high"] - r["score"] for r in pts]],
                        marker="o", capsize=3, label=label, ls="--" if "corner" in label else "-")
        ax.axvline(out["target_flip"], color="grey", lw=0.8, ls=":")
        ax.set(xlabel=f"label-flip rate (held-out draws; 90 % t interval over seeds {', '.join(seeds)})", ylabel="normalised return (0 random, 1 expert)",
               title="mpo: Pendulum-v1, return vs label noise")
        ax.legend(fontsize=7)
        mixed = [r for r in rows if r["setting"] == "mixed"]
        bx.barh([r["method"] for r in mixed], [r["score"] for r in mixed],
                xerr=[[r["score"] - r["low"] for r in mixed], [r["high"] - r["score"] for r in mixed]])
        bx.set(xlabel="normalised return", title="mixed-quality set (clean labels)")
        bx.tick_params(labelsize=7)
        save_png(fig, ctx.path(PLOT))
        # the registered policies (trained on the first verdict seed) in gymnasium itself
        first = seeds[0]
        lo, hi = out["seeds"][first]["bounds"]
        gym = {}
        for name in ("dpo", "discovered"):
            ret = gym_returns(ctx.path(f"{MODELS}/{name}"), ctx.params.evaluate.gym_episodes, int(first))
            gym[f"gym_{name}_score"] = float(normalised(np.mean(ret), lo, hi))
        m = per_seed_metrics(per, **gym)
        write_json(ctx.path(METRICS), m)
        for k, v in m.items():
            if isinstance(v, float):
                vals = [per[int(s)][k] for s in seeds] if k in per[int(first)] else []
                print(f"  {k}: mean {v:.3f}" + (f"  per seed {', '.join(f'{x:.3f}' for x in vals)}" if vals else ""),
                      flush=True)

if __name__ == "__main__":
    main()
