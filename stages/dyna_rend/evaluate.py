"""dyna_rend evaluate: success of every arm's policy in distribution and under the perturbations, the
pretext figures of the rendering arms, the controls, and the plots.

Outputs: reports/dyna_rend/metrics.json (what claims.yaml checks), reports/dyna_rend/success.png
and its table reports/dyna_rend/success.csv (arm x condition), reports/dyna_rend/renders.png
(held-out views of one test scene: true and rendered, now and after the instruction).
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


def comparisons(success: dict) -> dict:
    """The claims' differences of in-distribution success (and mean perturbed success)."""
    import numpy as np

    idd = {a: s["none"] for a, s in success.items()}
    pert = {a: float(np.mean([s[c] for c in CONDITIONS[1:]])) for a, s in success.items()}
    pre = [a for a in idd if a not in ("none", "dynarend_short")]
    out = {"transfer_gain": max(idd[a] for a in pre) - idd["none"],
           "transfer_gain_arm": max(pre, key=lambda a: idd[a]),
           "dynarend_minus_none": idd["dynarend"] - idd["none"],
           "perturbed_dynarend_minus_none": pert["dynarend"] - pert["none"]}
    for other in ("mae2d", "vidpred2d", "recon3d"):
        out[f"dynarend_minus_{other}"] = idd["dynarend"] - idd[other] if other in idd else None
    return out, pert


def plot_renders(path, model, test, cams_in, held) -> None:
    import torch

    from stages.common.plots import new_figure, save_png

    from .render import render

    one = {k: ({c: t[:1] for c, t in v.items()} if isinstance(v, dict) else v[:1]) for k, v in test.items()}
    with torch.no_grad():
        views = [one["views"][c] for c in cams_in]
        vis = [torch.ones_like(v[:, :1]) for v in views]
        cur, fut = model.enc(views, vis, one["instr"])
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

        from .loops import load_split, new_model, views_of
        from .nets import success
        from .world import Grid

        limit_threads()
        device = select_device(ctx.common.device)
        p = ctx.params.train
        grid = Grid(*ctx.params.prepare.grid)
        held = [c for c in CAMERAS if c not in p.cams_in]
        npz = np.load(ctx.path(SCENES))
        tests = {c: views_of(load_split(npz, f"test_{c}"), CAMERAS, device) for c in CONDITIONS}
        states = torch.load(io.BytesIO(ctx.path(WEIGHTS).read_bytes()), weights_only=True)

        def model_of(state):
            m = new_model(grid, p.channels, p.cams_in, 0, device)
            m.load_state_dict(state)
            return m.eval()

        succ = {name: {c: success(model_of(st["policy"]), tests[c], p.cams_in, ctx.params.evaluate.chunk)
                       for c in CONDITIONS} for name, st in states.items()}
        pretext = {arm: pretext_figures(model_of(states[arm]["pretrained"]), tests["none"], p.cams_in, held,
                                        ctx.seed) for arm in ("recon3d", "dynarend", "dynarend_short") if arm in states}
        comp, pert = comparisons(succ)
        dyn = pretext["dynarend"]
        claim = {"pretext_ratio": dyn["ratio"], "pretext_ratio_to_copy": dyn["ratio_to_copy"], **comp}
        control = {"pretext_ratio_shuffled_instruction": dyn["shuffled_instruction_ratio"],
                   "transfer_gain_short_pretraining": succ["dynarend_short"]["none"] - succ["none"]["none"],
                   "pretext_ratio_short_pretraining": pretext["dynarend_short"]["ratio"],
                   "short_pretraining_steps": p.control_steps}
        write_json(ctx.path(METRICS), {"success": succ, "perturbed_mean": pert, "pretext": pretext,
                                       "claim": claim, "control": control})
        rows = [{"method": name, "condition": c, "success": s[c]} for name, s in succ.items() for c in CONDITIONS]
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(7.5, 3.8))
        names = list(succ)
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            vals = [succ[name][c] for c in CONDITIONS]
            se = [np.sqrt(v * (1 - v) / ctx.params.prepare.n_test) for v in vals]
            ax.bar(np.arange(len(CONDITIONS)) + (i - (len(names) - 1) / 2) * width, vals, width, yerr=se,
                   capsize=2, label=name)
        ax.set_xticks(range(len(CONDITIONS)), ["in distribution", "distractors", "table colour", "lighting"])
        ax.set(ylabel="place success", title=f"dyna_rend: success by pre-training (seed {ctx.seed}, ±1 binomial SE)")
        ax.set_ylim(0, 1.18)
        ax.legend(fontsize=7, ncol=6, loc="upper center")
        save_png(fig, ctx.path(PLOT))
        plot_renders(ctx.path(VIEWS_PLOT), model_of(states["dynarend"]["pretrained"]), tests["none"], p.cams_in, held)
        ctx.run.log_metrics({f"success.{n}.{c}": v for n, s in succ.items() for c, v in s.items()})
        print("  success (in distribution): " + ", ".join(f"{n} {s['none']:.3f}" for n, s in succ.items())
              + f"; pretext ratio {dyn['ratio']:.3f} (shuffled instruction {dyn['shuffled_instruction_ratio']:.3f})",
              flush=True)


if __name__ == "__main__":
    main()
