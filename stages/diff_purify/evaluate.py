"""diff_purify evaluate: clean and robust accuracy of each defence under each attack.

Defences: ``none`` (the classifier alone), ``prior`` (Score-Opt-style purification with the score
prior only, lam = 0), ``aaopt`` (the prior plus the learned adversarial-perturbation score) and, when
trained, ``aaopt_noise`` (the control: the perturbation score learnt from random sign noise).
Attacks, at each L_inf radius of ``evaluate.eps``: ``pgd`` (white-box PGD on the undefended
classifier; for the purified pipelines a transfer attack) and ``bpda_eot`` (adaptive: PGD through
each pipeline, the purifier's backward pass taken as the identity, gradients averaged over ``eot``
purifier draws; an example counts as broken if the defended prediction is wrong at any checkpoint).

Outputs: reports/diff_purify/metrics.json (what claims.yaml checks), results.csv (accuracy per
defence, attack and radius, with intervals over test examples), robust_accuracy.png and its data
robust_accuracy.csv, grid.png (clean / adversarial / prior-purified / AAOpt-purified digits).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DIGITS, GRID, METRICS, PLOT, PLOT_DATA, RESULTS, WEIGHTS


def interval(values, level: float) -> dict:
    """Mean and t-interval over examples (stages.common.stats); the mean alone when all are equal."""
    import numpy as np

    from stages.common.stats import t_interval

    v = np.asarray(values, dtype=float)
    if np.all(v == v[0]):
        return {"mean": float(v[0]), "low": float(v[0]), "high": float(v[0]), "n": int(len(v))}
    t = t_interval(v, level)
    return {k: t[k] for k in ("mean", "low", "high", "n")}


def make_defences(nets: dict, pp, generator) -> dict:
    """name -> purifier (x -> x'); ``none`` is the identity."""
    from .core import purify

    kw = dict(steps=pp.steps, sigma_max=pp.sigma_max, sigma_min=pp.sigma_min, eta=pp.eta,
              pert_sigma=pp.pert_sigma, generator=generator)
    out = {"none": lambda x: x,
           "prior": lambda x: purify(x, nets["prior"], None, lam=0.0, **kw),
           "aaopt": lambda x: purify(x, nets["prior"], nets["pert"], lam=pp.lam, **kw)}
    if "pert_noise" in nets:
        out["aaopt_noise"] = lambda x: purify(x, nets["prior"], nets["pert_noise"], lam=pp.lam, **kw)
    return out


def draw_grid(path, rows: dict, labels: dict, n: int) -> None:
    """A grid of 8x8 digits: one row per entry of ``rows`` (name -> (N, 64) array), ``n`` columns,
    each image titled with the classifier's label for it."""
    from stages.common.plots import new_figure, save_png

    names = list(rows)
    fig, axes = new_figure(len(names), n, figsize=(1.1 * n + 1.4, 1.25 * len(names)), squeeze=False)
    for r, name in enumerate(names):
        for c in range(n):
            ax = axes[r][c]
            ax.imshow(rows[name][c].reshape(8, 8), cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(str(labels[name][c]), fontsize=8, pad=2)
            if c == 0:
                ax.set_ylabel(name, fontsize=8)
    fig.suptitle("diff_purify: classifier's label above each digit", fontsize=9)
    save_png(fig, path)


def main() -> None:
    with stage("diff_purify", "evaluate", PARAMS) as ctx:
        import time

        import numpy as np
        import torch
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.samples import frechet_from_features

        from .core import bpda_eot, defended_logits, load_weights, pgd

        limit_threads()
        d = np.load(ctx.path(DIGITS))
        nets, _ = load_weights(ctx.path(WEIGHTS))
        ep, pp = ctx.params.evaluate, ctx.params.purify
        n = min(ep.n_attack, len(d["y_test"]))
        x, y = torch.as_tensor(d["x_test"][:n]), torch.as_tensor(d["y_test"][:n])
        clf = nets["classifier"]
        for prm in clf.parameters():
            prm.requires_grad_(False)
        g = torch.Generator().manual_seed(ctx.seed * 1000 + 7)
        defences = make_defences(nets, pp, g)

        def correct(pur, xs):
            return (defended_logits(clf, pur, xs, ep.defence_reps).argmax(1) == y).numpy().astype(float)

        per = {}            # (defence, attack, eps) -> per-example 0/1
        cpu = {}
        for name, pur in defences.items():
            per[(name, "clean", 0.0)] = correct(pur, x)
        adv_main = None
        for eps in tqdm(ep.eps, desc="diff_purify: radii", mininterval=2):
            t0 = time.process_time()
            xa = pgd(clf, x, y, eps, eps / 8, ep.pgd_steps, g)
            if eps == ep.main_eps:
                adv_main = xa
            for name, pur in defences.items():
                per[(name, "pgd", eps)] = correct(pur, xa)
            cpu[f"pgd_{eps}"] = time.process_time() - t0
            for name, pur in defences.items():
                t0 = time.process_time()
                _, fooled = bpda_eot(clf, pur, x, y, eps, eps / 8, ep.bpda_steps, ep.eot, g,
                                     check_every=ep.check_every, defence_reps=ep.defence_reps)
                per[(name, "bpda_eot", eps)] = (~fooled).numpy().astype(float)
                cpu[f"bpda_{name}_{eps}"] = time.process_time() - t0

        rows = [{"defence": k[0], "attack": k[1], "eps": k[2], **interval(v, ep.level)} for k, v in per.items()]
        names = list(defences)
        clean = {nm: interval(per[(nm, "clean", 0.0)], ep.level) for nm in names}
        drop = {nm: 100 * (clean["none"]["mean"] - clean[nm]["mean"]) for nm in names if nm != "none"}
        metrics = {"n_attack": n, "main_eps": ep.main_eps, "clean": clean, "clean_drop_points": drop,
                   "max_clean_drop_points": max(drop[nm] for nm in ("prior", "aaopt")),
                   "robust": {a: {str(e): {nm: float(np.mean(per[(nm, a, e)])) for nm in names} for e in ep.eps}
                              for a in ("pgd", "bpda_eot")}}
        main = {}
        pairs = [("aaopt", "prior"), ("prior", "none"), ("aaopt", "none")]
        if "aaopt_noise" in names:
            pairs.append(("aaopt", "aaopt_noise"))
        for a in ("pgd", "bpda_eot"):
            m = {nm: interval(per[(nm, a, ep.main_eps)], ep.level) for nm in names}
            for hi, lo in pairs:     # paired over examples: the same test digits under each defence
                m[f"{hi}_minus_{lo}"] = interval(per[(hi, a, ep.main_eps)] - per[(lo, a, ep.main_eps)], ep.level)
            main[a] = m
        metrics["main"] = main

        # sample quality of the purified digits: Fréchet distance to the clean test digits in the
        # classifier's hidden features (second ReLU layer), for the PGD examples at the main radius
        feats = torch.nn.Sequential(*list(clf.net.children())[:4])
        with torch.no_grad():
            ref = feats(x).numpy()
            purified = {"adversarial": adv_main, "prior_purified": defences["prior"](adv_main),
                        "aaopt_purified": defences["aaopt"](adv_main), "prior_purified_clean": defences["prior"](x),
                        "aaopt_purified_clean": defences["aaopt"](x)}
            metrics["frechet_hidden"] = {k: frechet_from_features(ref, feats(v).numpy()) for k, v in purified.items()}
        ctx.run.log_metrics({f"cpu_s.{k}": v for k, v in cpu.items()})
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(RESULTS), rows)

        table = [{"eps": r["eps"], "method": f"{r['defence']} ({r['attack']})", "accuracy": r["mean"]}
                 for r in rows if r["attack"] != "clean"]
        write_csv(ctx.path(PLOT_DATA), table)
        fig, axes = new_figure(1, 2, figsize=(10, 3.8), sharey=True)
        for ax, a in zip(axes, ("pgd", "bpda_eot")):
            for nm in names:
                rs = [r for r in rows if r["defence"] == nm and r["attack"] in (a, "clean")]
                rs.sort(key=lambda r: r["eps"])
                es = [r["eps"] for r in rs]
                ax.errorbar(es, [r["mean"] for r in rs],
                            yerr=[[r["mean"] - r["low"] for r in rs], [r["high"] - r["mean"] for r in rs]],
                            marker="o", capsize=3, label=nm)
            ax.axvline(ep.main_eps, color="grey", ls=":", lw=1)
            ax.set(xlabel="L_inf radius eps (0 = clean)", title=f"{a} ({n} test digits, {int(100 * ep.level)}% t-intervals)")
        axes[0].set_ylabel("accuracy")
        axes[1].legend(fontsize=8)
        save_png(fig, ctx.path(PLOT))

        k = ep.grid
        with torch.no_grad():
            imgs = {"clean": x[:k], f"PGD eps={ep.main_eps}": adv_main[:k],
                    "prior-purified": purified["prior_purified"][:k], "AAOpt-purified": purified["aaopt_purified"][:k]}
            labels = {nm: clf(v).argmax(1).tolist() for nm, v in imgs.items()}
        draw_grid(ctx.path(GRID), {nm: v.numpy() for nm, v in imgs.items()}, labels, k)

        print("  clean: " + ", ".join(f"{nm} {clean[nm]['mean']:.3f}" for nm in names), flush=True)
        for a in ("pgd", "bpda_eot"):
            for e in ep.eps:
                print(f"  {a:8s} eps {e}: " + ", ".join(f"{nm} {metrics['robust'][a][str(e)][nm]:.3f}" for nm in names),
                      flush=True)
        print("  CPU s: " + ", ".join(f"{kk} {v:.1f}" for kk, v in cpu.items()), flush=True)


if __name__ == "__main__":
    main()
