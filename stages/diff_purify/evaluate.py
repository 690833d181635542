"""diff_purify evaluate: clean and robust accuracy of each defence under each attack.

Defences: ``none`` (the classifier alone), ``noise_only`` (the purification loop with a blind prior,
core.BlindScore: only the purifier's injected noise; the control of prior-only > none), ``prior``
(Score-Opt-style purification with the score prior only, lam = 0), ``aaopt`` (the prior plus the
learned adversarial-perturbation score) and, when trained, ``aaopt_noise`` (the control of AAOpt >
prior-only: the perturbation score learnt from random sign noise, i.e. generic corruption).
Attacks, at each L_inf radius of ``evaluate.eps``: ``pgd`` (white-box PGD on the undefended
classifier; for the purified pipelines a transfer attack) and ``bpda_eot`` (adaptive: PGD through
each pipeline, the purifier's backward pass taken as the identity, gradients averaged over ``eot``
purifier draws; an example counts as broken if the defended prediction is wrong at any checkpoint).

Every verdict seed (``ctx.seeds``) is evaluated on its own test digits with its own networks and
draws (``evaluate_seed``), one seed after another in this process.

Outputs: reports/diff_purify/metrics.json (what claims.yaml checks: ``per_seed`` with each seed's
figures, beside their mean over the seeds), results.csv (accuracy per seed, defence, attack and
radius, with intervals over the seed's test digits), robust_accuracy.png and its data
robust_accuracy.csv (mean over the seeds, and the lowest and highest seed), grid.png (clean /
adversarial / prior-purified / AAOpt-purified digits of the first seed).
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


# paired differences over the same test digits (hi, lo) kept for the main and the small radius
PAIRS = [("aaopt", "prior"), ("prior", "none"), ("aaopt", "none"), ("aaopt", "aaopt_noise"),
         ("aaopt_noise", "prior"), ("noise_only", "none")]


def make_defences(nets: dict, pp, generator) -> dict:
    """name -> purifier (x -> x'); ``none`` is the identity."""
    from .core import BlindScore, purify

    kw = dict(steps=pp.steps, sigma_max=pp.sigma_max, sigma_min=pp.sigma_min, eta=pp.eta,
              pert_sigma=pp.pert_sigma, generator=generator)
    blind = BlindScore()
    out = {"none": lambda x: x,
           "noise_only": lambda x: purify(x, blind, None, lam=0.0, **kw),
           "prior": lambda x: purify(x, nets["prior"], None, lam=0.0, **kw),
           "aaopt": lambda x: purify(x, nets["prior"], nets["pert"], lam=pp.lam, **kw)}
    if "pert_noise" in nets:
        out["aaopt_noise"] = lambda x: purify(x, nets["prior"], nets["pert_noise"], lam=pp.control_lam, **kw)
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
    fig.suptitle("diff_purify: classifier's label above each digit (first seed)", fontsize=9)
    save_png(fig, path)


def evaluate_seed(x_test, y_test, nets: dict, pp, ep, seed: int, log=print) -> dict:
    """One seed's figures (``pp``/``ep``: the purify and evaluate params): ``metrics`` (that
    seed's entry of metrics.json's ``per_seed``), ``rows`` (results.csv's rows), ``cpu`` (CPU
    seconds per part), ``adv_main`` (the PGD examples at the main radius) and ``purified`` (those
    and the clean digits after purification). Every draw comes from a generator seeded by ``seed``."""
    import time

    import numpy as np
    import torch

    from stages.common.samples import frechet_from_features

    from .core import bpda_eot, defended_logits, pgd

    n = min(ep.n_attack, len(y_test))
    x, y = torch.as_tensor(x_test[:n]), torch.as_tensor(y_test[:n])
    clf = nets["classifier"]
    for prm in clf.parameters():
        prm.requires_grad_(False)
    g = torch.Generator().manual_seed(seed * 1000 + 7)
    defences = make_defences(nets, pp, g)

    def correct(pur, xs):
        return (defended_logits(clf, pur, xs, ep.defence_reps).argmax(1) == y).numpy().astype(float)

    per = {}            # (defence, attack, eps) -> per-example 0/1
    cpu = {}
    for name, pur in defences.items():
        per[(name, "clean", 0.0)] = correct(pur, x)
    adv_main = None
    for eps in ep.eps:
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
        log(f"    seed {seed} eps {eps}: BPDA+EOT " + ", ".join(
            f"{nm} {per[(nm, 'bpda_eot', eps)].mean():.3f}" for nm in defences)
            + f" ({sum(v for k, v in cpu.items() if k.endswith(f'_{eps}')):.1f} CPU s)")

    rows = [{"seed": seed, "defence": k[0], "attack": k[1], "eps": k[2], **interval(v, ep.level)}
            for k, v in per.items()]
    names = list(defences)
    clean = {nm: interval(per[(nm, "clean", 0.0)], ep.level) for nm in names}
    drop = {nm: 100 * (clean["none"]["mean"] - clean[nm]["mean"]) for nm in names if nm != "none"}
    metrics = {"n_attack": n, "main_eps": ep.main_eps, "small_eps": ep.small_eps, "clean": clean,
               "clean_drop_points": drop, "max_clean_drop_points": max(drop[nm] for nm in ("prior", "aaopt")),
               "robust": {a: {str(e): {nm: float(np.mean(per[(nm, a, e)])) for nm in names} for e in ep.eps}
                          for a in ("pgd", "bpda_eot")}}
    pairs = [(hi, lo) for hi, lo in PAIRS if hi in names and lo in names]
    for section, eps in (("main", ep.main_eps), ("small", ep.small_eps)):
        out = {}
        for a in ("pgd", "bpda_eot"):
            m = {nm: interval(per[(nm, a, eps)], ep.level) for nm in names}
            for hi, lo in pairs:     # paired over examples: the same test digits under each defence
                m[f"{hi}_minus_{lo}"] = interval(per[(hi, a, eps)] - per[(lo, a, eps)], ep.level)
            out[a] = m
        metrics[section] = out

    # how far purification moves the digits: Fréchet distance to the clean test digits in the
    # classifier's hidden features (second ReLU layer), for the PGD examples at the main radius
    feats = torch.nn.Sequential(*list(clf.net.children())[:4])
    with torch.no_grad():
        ref = feats(x).numpy()
        purified = {"adversarial": adv_main, "prior_purified": defences["prior"](adv_main),
                    "aaopt_purified": defences["aaopt"](adv_main), "prior_purified_clean": defences["prior"](x),
                    "aaopt_purified_clean": defences["aaopt"](x)}
        metrics["frechet_hidden"] = {k: frechet_from_features(ref, feats(v).numpy()) for k, v in purified.items()}
    return {"metrics": metrics, "rows": rows, "cpu": cpu, "x": x, "adv_main": adv_main, "purified": purified}


def main() -> None:
    with stage("diff_purify", "evaluate", PARAMS) as ctx:
        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .core import load_weights
        from .data import seed_split

        limit_threads()
        d = np.load(ctx.path(DIGITS))
        ep, pp = ctx.params.evaluate, ctx.params.purify

        def one(seed: int) -> dict:
            _, _, xte, yte = seed_split(d, seed)
            nets, _ = load_weights(ctx.path(WEIGHTS), seed)
            return evaluate_seed(xte, yte, nets, pp, ep, seed)

        out = run_seeds(ctx.seeds, one, what="evaluate seed")
        ctx.run.log_metrics({f"cpu_s.seed{s}.{k}": v for s, r in out.items() for k, v in r["cpu"].items()})
        metrics = per_seed_metrics({s: r["metrics"] for s, r in out.items()})
        write_json(ctx.path(METRICS), metrics)
        rows = [row for r in out.values() for row in r["rows"]]
        write_csv(ctx.path(RESULTS), rows)

        # accuracy vs radius: the mean over the seeds, with the lowest and highest seed
        by = {}
        for r in rows:
            by.setdefault((r["defence"], r["attack"], r["eps"]), []).append(r["mean"])
        table = [{"eps": e, "method": f"{nm} ({a})", "accuracy": float(np.mean(v)), "seed_min": float(np.min(v)),
                  "seed_max": float(np.max(v))} for (nm, a, e), v in by.items() if a != "clean"]
        write_csv(ctx.path(PLOT_DATA), table)
        first = out[ctx.seeds[0]]
        names = list(first["metrics"]["clean"])
        n = first["metrics"]["n_attack"]
        fig, axes = new_figure(1, 2, figsize=(10, 3.8), sharey=True)
        for ax, a in zip(axes, ("pgd", "bpda_eot")):
            for nm in names:
                keys = sorted((k for k in by if k[0] == nm and k[1] in (a, "clean")), key=lambda k: k[2])
                es = [k[2] for k in keys]
                mean = [float(np.mean(by[k])) for k in keys]
                ax.errorbar(es, mean, yerr=[[m - min(by[k]) for m, k in zip(mean, keys)],
                                            [max(by[k]) - m for m, k in zip(mean, keys)]],
                            marker="o", capsize=3, label=nm)
            ax.axvline(ep.main_eps, color="grey", ls=":", lw=1)
            ax.set_xlabel("L_inf radius eps (0 = clean)")
            ax.set_title(f"{a}: {len(ctx.seeds)} seeds x {n} test digits (bars: seed range)", fontsize=9)
        axes[0].set_ylabel("accuracy (mean over seeds)")
        axes[1].legend(fontsize=8)
        save_png(fig, ctx.path(PLOT))

        k = ep.grid
        clf = load_weights(ctx.path(WEIGHTS), ctx.seeds[0])[0]["classifier"]
        with torch.no_grad():
            imgs = {"clean": first["x"][:k], f"PGD eps={ep.main_eps}": first["adv_main"][:k],
                    "prior-purified": first["purified"]["prior_purified"][:k],
                    "AAOpt-purified": first["purified"]["aaopt_purified"][:k]}
            labels = {nm: clf(v).argmax(1).tolist() for nm, v in imgs.items()}
        draw_grid(ctx.path(GRID), {nm: v.numpy() for nm, v in imgs.items()}, labels, k)

        print("  clean (mean over seeds): " + ", ".join(f"{nm} {metrics['clean'][nm]['mean']:.3f}" for nm in names),
              flush=True)
        for a in ("pgd", "bpda_eot"):
            for e in ep.eps:
                print(f"  {a:8s} eps {e}: " + ", ".join(f"{nm} {metrics['robust'][a][str(e)][nm]:.3f}" for nm in names),
                      flush=True)


if __name__ == "__main__":
    main()
