"""zipf_bigram train: iterations-to-epsilon of GD and tuned sign descent for every (alpha, d),
the full torch model where it fits (checked against the simulator), and GD / sign descent /
Adam on real-text bigrams.

Only the full model draws anything (its per-row permutations): it runs on every verdict seed,
in this process, one seed after another (``agreement``, one entry per seed and (alpha, d)). The
iteration counts (a function of the spectra alone) and the real-text curves (full-batch from
W = 0 on a fixed table) do not depend on the seed and run once.

Outputs: data/zipf_bigram/results.json (everything, with curves) and
reports/zipf_bigram/train.json (the summary DVC tracks as metrics).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import ZipfParams
from .paths import REALTEXT, RESULTS, STATS, TRAIN_METRICS


def realtext_stats(ds, device):
    import torch

    from .torch_model import BigramStats

    b, v = ds["bigrams"], ds["vocab"]
    d = len(v)
    counts = torch.zeros(d, d, dtype=torch.float64)
    counts.index_put_((torch.tensor(b["x"]), torch.tensor(b["y"])),
                      torch.tensor(b["count"], dtype=torch.float64), accumulate=True)
    rows = counts.sum(1)
    keep = rows > 0                      # words never followed by a vocabulary word: no input rows
    counts = counts[keep]
    rows = rows[keep]
    # inputs are the kept words; outputs stay the full vocabulary (a d_in × d matrix W)
    pi = rows / rows.sum()
    return BigramStats(pi.to(device), (counts / rows[:, None]).to(device)), int(keep.sum()), d


def agreement_summary(agreement: list[dict]) -> dict:
    """The largest gaps between the full torch model and the simulator over one seed's runs."""
    keys = ("gd_max_abs_diff", "sign_max_abs_diff", "sign_closed_form_max_abs_diff")
    return {k: max((a[k] for a in agreement), default=None) for k in keys}


def first_at_or_below(curve, target: float):
    import numpy as np

    idx = np.nonzero(np.asarray(curve) <= target)[0]
    return int(idx[0]) if len(idx) else None


def main() -> None:
    with stage("zipf_bigram", "train", ZipfParams) as ctx:
        import datasets
        import numpy as np
        from tqdm import tqdm

        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        from . import model, torch_model
        from .model import alpha_key

        p = ctx.params.train
        from stages.common.device import select_device
        device = select_device(ctx.common.device)
        tuning = model.SignTuning(p.sign_grid.lo, p.sign_grid.hi, p.sign_grid.size,
                                  p.sign_grid.budget_ratio)
        stats = datasets.load_from_disk(str(ctx.path(STATS))).with_format("numpy")

        scaling = []
        for row in tqdm(stats, desc="iterations-to-epsilon", total=len(stats)):
            pi, q = np.asarray(row["pi"]), np.asarray(row["q"])
            t_gd = model.gd_iterations(pi, p.epsilon, p.gd_t_max)
            t_sign, eta = model.sign_iterations(q, p.epsilon, tuning, p.sign_t_max)
            scaling.append({
                "alpha": float(row["alpha"]), "d": int(row["d"]), "gd_iters": t_gd,
                "sign_iters": t_sign, "sign_eta": eta,
                # the tuned step in units of q_1 / T: where in the grid the optimum fell
                "sign_eta_rel": (eta * t_sign / float(q.max())) if t_sign else None,
            })
        edge = [r for r in scaling if r["sign_eta_rel"] and not
                (p.sign_grid.lo * 1.001 < r["sign_eta_rel"] < p.sign_grid.hi * 0.999)]
        for r in edge:
            print(f"  note: tuned sign step at the edge of the grid for alpha={r['alpha']:g}, d={r['d']}")

        agreement = []
        full_rows = [r for r in stats if int(r["log2_d"]) in set(p.full_model_log2_ds)]
        T = p.full_model_steps
        ts = np.arange(T + 2)
        for row in tqdm(full_rows, desc=f"full d×d torch model, seeds {ctx.seeds}"):
            pi, q = np.asarray(row["pi"]), np.asarray(row["q"])
            gd_sim = model.gd_relative_error(pi, ts)           # the simulator: seed-free, once
            _, eta = model.tuned_sign(q, T, tuning)
            sign_sim = model.sign_simulate(q, T + 1, eta)
            sign_closed = np.array([model.sign_relative_error(q, int(t), eta) for t in ts])
            for seed, perm_seed in zip(ctx.seeds, row["perm_seeds"]):
                st = torch_model.permuted_power_law(pi, q, int(perm_seed), device=device)
                gd_full = torch_model.train(st, "gd", T + 1, 1.0 / float(pi.max()))
                sign_full = torch_model.train(st, "sign", T + 1, eta)
                agreement.append({
                    "seed": seed, "alpha": float(row["alpha"]), "d": int(row["d"]), "steps": T,
                    "sign_eta": eta,
                    "gd_max_abs_diff": float(np.abs(gd_full - gd_sim).max()),
                    "sign_max_abs_diff": float(np.abs(sign_full - sign_sim).max()),
                    "sign_closed_form_max_abs_diff": float(np.abs(sign_closed - sign_sim).max()),
                    "gd_full": gd_full.tolist(), "gd_sim": gd_sim.tolist(),
                    "sign_full": sign_full.tolist(), "sign_sim": sign_sim.tolist(),
                })

        # real text: GD (step 1/L), sign descent and Adam (torch.optim) with tuned steps
        rt, d_in, d_out = realtext_stats(datasets.load_from_disk(str(ctx.path(REALTEXT))), device)
        Tr = p.realtext_steps
        curves = {"gd": torch_model.train(rt, "gd", Tr + 1, 1.0 / float(rt.pi.max()))}
        tuned = {}
        for name, lrs in (("sign", p.realtext_sign_lrs), ("adam", p.realtext_adam_lrs)):
            best = None
            for lr in tqdm(lrs, desc=f"real text {name}"):
                c = torch_model.train(rt, name, Tr + 1, lr)
                score = max(c[Tr], c[Tr + 1])     # the same parity-safe envelope as above
                if best is None or score < best[0]:
                    best = (score, lr, c)
            tuned[name], curves[name] = best[1], best[2]
        final = {k: float(max(c[Tr], c[Tr + 1])) for k, c in curves.items()}
        realtext = {
            "d_in": d_in, "d_out": d_out, "steps": Tr, "relerr": final, "tuned_lr": tuned,
            "gd_lr": 1.0 / float(rt.pi.max()),
            "iters_to_gd_final": {k: first_at_or_below(c, final["gd"]) for k, c in curves.items()},
            "curves": {k: c.tolist() for k, c in curves.items()},
        }
        write_json(ctx.path(RESULTS), {"epsilon": p.epsilon, "sign_grid": p.sign_grid.model_dump(),
                                       "scaling": scaling, "agreement": agreement,
                                       "realtext": realtext})
        summary = per_seed_metrics(
            {s: {"agreement": agreement_summary([a for a in agreement if a["seed"] == s])} for s in ctx.seeds},
            epsilon=p.epsilon, sign_grid_edge_hits=len(edge),
            realtext={"relerr": final, "tuned_lr": tuned},
            iters={f"{opt}.{alpha_key(r['alpha'])}.d_{r['d']}": r[f"{opt}_iters"]
                   for r in scaling for opt in ("gd", "sign") if r[f"{opt}_iters"] is not None})
        write_json(ctx.path(TRAIN_METRICS), summary)
        for k, c in curves.items():
            ctx.run.log_curve(f"realtext.relerr.{k}", c)
        if agreement:
            a = max((a for a in agreement if a["seed"] == ctx.seeds[0]), key=lambda a: (a["alpha"] == 1.0, a["d"]))
            for k in ("gd_full", "gd_sim", "sign_full", "sign_sim"):
                ctx.run.log_curve(f"full_model.{alpha_key(a['alpha'])}.d_{a['d']}.{k}", a[k])
        print(f"  real text: rel. error after {Tr} steps: " +
              ", ".join(f"{k}={v:.3g}" for k, v in final.items()))


if __name__ == "__main__":
    main()
