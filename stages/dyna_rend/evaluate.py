"""dyna_rend evaluate, for every verdict seed: success of every arm's policy on the seed's stacking
test scenes in distribution and under the perturbations, the pretext figures of the rendering arms
(on the seed's held-out push scenes), the controls, and the plots.

Outputs: reports/dyna_rend/metrics.json (what claims.yaml checks: ``per_seed`` figures and their
means, stages.common.seeds.per_seed_metrics), reports/dyna_rend/success.png and its table
reports/dyna_rend/success.csv (arm x condition, mean over the seeds; the plot also shows each seed),
reports/dyna_rend/renders.png (held-out views of the first seed's first push test scene: true and
rendered, now and after the instruction).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import CAMERAS, PARAMS
from .paths import METRICS, PLOT, PLOT_DATA, SCENES, VIEWS_PLOT, WEIGHTS

CONDITIONS = ("none", "distractors", "table", "lighting")


def pretext_figures(model, test, cams_in, held, seed: int) -> dict:
    """Held-out-view MSEs of the model's future render, of its present render scored against the
    future ("nothing moves"), of the true present views (copy), and of the future render when each
    scene gets another scene's instruction (the control)."""
    import torch

    from .nets import future_mse
    from .loops import take

    fut = future_mse(model, test, cams_in, held, use_future=True)
    still = future_mse(model, test, cams_in, held, use_future=False)
    copy = float(sum(((test["views"][c] - test["views_f"][c]) ** 2).mean() for c in held) / len(held))
    n = test["target"].shape[0]
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).to(test["instr"].device)
    shuffled = dict(take(test, slice(None)))
    shuffled["instr"] = test["instr"][perm]
    fut_sh = future_mse(model, shuffled, cams_in, held, use_future=True)
    return {"future_mse": fut, "nothing_moves_mse": still, "copy_present_mse": copy,
            "ratio": fut / still, "ratio_to_copy": fut / copy,
            "shuffled_instruction_mse": fut_sh, "shuffled_instruction_ratio": fut_sh / still}


PRETRAINED = ("mae2d", "vidpred2d", "recon3d", "dynarend")     # the arms of the comparison (not the control)
TWO_D = ("mae2d", "vidpred2d")


def comparisons(success: dict) -> tuple[dict, dict]:
    """The claims' differences of in-distribution success (and mean perturbed success), one seed."""
    import numpy as np

    idd = {a: s["none"] for a, s in success.items()}
    pert = {a: float(np.mean([s[c] for c in CONDITIONS[1:]])) for a, s in success.items()}
    pre = [a for a in PRETRAINED if a in idd]
    two_d = [a for a in TWO_D if a in idd]
    best2d = max(idd[a] for a in two_d) if two_d else None
    out = {"transfer_gain": max(idd[a] for a in pre) - idd["none"],
           "transfer_gain_arm": max(pre, key=lambda a: idd[a]),
           "dynarend_minus_none": idd["dynarend"] - idd["none"],
           "dynarend_minus_best2d": None if best2d is None else idd["dynarend"] - best2d,
           "perturbed_dynarend_minus_none": pert["dynarend"] - pert["none"]}
    for other in ("mae2d", "vidpred2d", "recon3d"):
        out[f"dynarend_minus_{other}"] = idd["dynarend"] - idd[other] if other in idd else None
    return out, pert


def seed_figures(states: dict, tests: dict, push: dict, grid, p, held, seed: int, chunk: int, device="cpu") -> dict:
    """Every figure of one seed: success per arm and condition, the best 2-D arm, the pretext
    figures of the rendering arms (on the seed's held-out push scenes), the claims' differences
    and the controls'."""
    from .loops import new_model
    from .nets import RENDER_ARMS, success

    def build(state):
        m = new_model(grid, p.channels, p.cams_in, 0, device)
        m.load_state_dict(state)
        return m.eval()

    succ = {arm: {c: success(build(st["policy"]), tests[c], p.cams_in, chunk) for c in CONDITIONS}
            for arm, st in states.items()}
    pretext = {arm: pretext_figures(build(states[arm]["pretrained"]), push, p.cams_in, held, seed)
               for arm in RENDER_ARMS if arm in states}
    comp, pert = comparisons(succ)
    dyn = pretext["dynarend"]
    claim = {"pretext_ratio": dyn["ratio"], "pretext_ratio_to_copy": dyn["ratio_to_copy"], **comp}
    control = {"pretext_ratio_shuffled_instruction": dyn["shuffled_instruction_ratio"]}
    if "dynarend_blind" in succ:
        control.update(transfer_gain_blind=succ["dynarend_blind"]["none"] - succ["none"]["none"],
                       pretext_ratio_blind=pretext["dynarend_blind"]["ratio"])
    two_d = [a for a in TWO_D if a in succ]
    best = {"arm": max(two_d, key=lambda a: succ[a]["none"]), "none": max(succ[a]["none"] for a in two_d)} if two_d else {}
    return {"success": succ, "best_2d": best, "perturbed_mean": pert, "pretext": pretext,
            "claim": claim, "control": control}


def plot_renders(path, model, test, cams_in, held) -> None:
    import torch

    from stages.common.plots import new_figure, save_png

    from .render import render

    one = {k: ({c: t[:1] for c, t in v.items()} if isinstance(v, dict) else v[:1]) for k, v in test.items()}
    with torch.no_grad():
        views = [one["views"][c] for c in cams_in]
        vis = [torch.ones_like(v[:, :1]) for v in views]
        cur, fut, _ = model.enc(views, vis, one["instr"])
        rend = {}
        for tag, f in (("now", cur), ("future", fut)):
            a, col = model.decode(f)
            rend[tag] = {c: render(a, col, one["table"], c) for c in held}
    fig, axes = new_figure(len(held), 4, figsize=(8, 2.1 * len(held)), squeeze=False)
    cols = (("true, now", one["views"]), ("rendered, now", rend["now"]),
            ("true, after", one["views_f"]), ("rendered, after", rend["future"]))
    for i, cam in enumerate(held):
        for j, (title, src) in enumerate(cols):
            img = src[cam][0, :3].clamp(0, 1).permute(2, 1, 0).cpu().numpy()
            axes[i, j].imshow(img, interpolation="nearest")
            axes[i, j].set_xticks([]), axes[i, j].set_yticks([])
            if i == 0:
                axes[i, j].set_title(title, fontsize=8)
        axes[i, 0].set_ylabel(f"held-out {cam}", fontsize=8)
    save_png(fig, path)


def main() -> None:
    with stage("dyna_rend", "evaluate", PARAMS) as ctx:
        import io

        import numpy as np
        import torch

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .loops import load_split, new_model, views_of
        from .world import Grid

        limit_threads()
        device = select_device(ctx.common.device)
        p = ctx.params.train
        grid = Grid(*ctx.params.prepare.grid)
        held = [c for c in CAMERAS if c not in p.cams_in]
        npz = np.load(ctx.path(SCENES))
        weights = torch.load(io.BytesIO(ctx.path(WEIGHTS).read_bytes()), weights_only=True)
        missing = [s for s in ctx.seeds if s not in weights]
        if missing:
            raise ValueError(f"data/dyna_rend/weights.pt holds no arms for seeds {missing}: run dyna_rend-train")

        def one(seed):
            tests = {c: views_of(load_split(npz, f"test_{c}", seed), CAMERAS, device) for c in CONDITIONS}
            push = views_of(load_split(npz, "test_push", seed), CAMERAS, device)
            return seed_figures(weights[seed], tests, push, grid, p, held, seed, ctx.params.evaluate.chunk, device)

        per_seed = run_seeds(ctx.seeds, one, what="seed")
        metrics = per_seed_metrics(per_seed)
        write_json(ctx.path(METRICS), metrics)
        rows = [{"method": name, "condition": c, "success": float(np.mean([per_seed[s]["success"][name][c]
                                                                           for s in ctx.seeds]))}
                for name in per_seed[ctx.seeds[0]]["success"] for c in CONDITIONS]
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(7.5, 3.8))
        names = list(per_seed[ctx.seeds[0]]["success"])
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            x = np.arange(len(CONDITIONS)) + (i - (len(names) - 1) / 2) * width
            vals = [metrics["success"][name][c] for c in CONDITIONS]
            ax.bar(x, vals, width, label=name, alpha=0.6)
            for j, c in enumerate(CONDITIONS):        # each seed's figure as a dot
                ax.plot([x[j]] * len(ctx.seeds), [per_seed[s]["success"][name][c] for s in ctx.seeds], ".k", ms=2)
        ax.set_xticks(range(len(CONDITIONS)), ["in distribution", "distractors", "table colour", "lighting"])
        ax.set(ylabel="place success",
               title=f"dyna_rend: success by pre-training (bars: mean of seeds {ctx.seeds}; dots: seeds)")
        ax.set_ylim(0, 1.18)
        ax.legend(fontsize=7, ncol=6, loc="upper center")
        save_png(fig, ctx.path(PLOT))
        first = ctx.seeds[0]
        m = new_model(grid, p.channels, p.cams_in, 0, device)
        m.load_state_dict(weights[first]["dynarend"]["pretrained"])
        plot_renders(ctx.path(VIEWS_PLOT), m.eval(), views_of(load_split(npz, "test_push", first), CAMERAS, device),
                     p.cams_in, held)
        ctx.run.log_metrics({f"success.{n}.{c}": v for n, s in metrics["success"].items() for c, v in s.items()})
        for s in ctx.seeds:
            f = per_seed[s]
            print(f"  seed {s}: success (in distribution) " + ", ".join(f"{n} {v['none']:.3f}" for n, v in f["success"].items())
                  + f"; pretext ratio {f['claim']['pretext_ratio']:.3f} (shuffled instruction "
                  f"{f['control']['pretext_ratio_shuffled_instruction']:.3f})", flush=True)


if __name__ == "__main__":
    main()
