"""autosep train: the black box's "pre-training" (its class prototypes) and every prompt search.

For the main setting and each control (experiment.settings), on every repeat and group: AutoSEP
(instance-level score, no labels), the random-score control, and the label-based optimisations
(majority-vote pseudo-labels, random labels, true labels as the reference), all from the generic
prompt. The black box with AutoSEP's prompts is saved and registered as an MLflow pyfunc model.
Outputs: data/autosep/prompts.json, data/autosep/model, reports/autosep/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, MODEL, PROMPTS, TRAIN_METRICS


def save_model(target, prototypes, blackbox: dict, prompts: list[list[int]], seed: int) -> None:
    """The black box and AutoSEP's prompt of each group (repeat 0) as an MLflow pyfunc folder."""
    import json
    import tempfile
    from pathlib import Path

    from stages.common.mlmodel import pinned, save_pyfunc

    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "config.json"
        config.write_text(json.dumps({"prototypes": prototypes.tolist(), "blackbox": blackbox,
                                      "prompts": prompts, "seed": seed}, sort_keys=True))
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"config": config},
                    requirements=pinned("numpy"))


def main() -> None:
    with stage("autosep", "train", PARAMS) as ctx:
        import time

        import numpy as np
        from tqdm import tqdm

        from stages.common.io import write_json

        from .experiment import Search, generic_prompt, group_seed, search_group, settings
        from .sim import GROUPS, Blackbox, prototypes

        p = ctx.params.train
        d = np.load(ctx.path(DATASET))
        x, y, unl = d["x"], d["y"], d["unlabelled"]
        protos = prototypes(x[d["pretrain"]], y[d["pretrain"]])
        s = Search(**p.search.model_dump())
        out, summary = {}, {}
        t0 = time.process_time()
        for name, (bb_kw, rule, methods) in settings(p.blackbox.model_dump(), p.generic_rule,
                                                     p.ablations.finer_block, p.ablations.blind_compare_noise).items():
            bb = Blackbox(protos, **bb_kw)
            gen = generic_prompt(x[d["pretrain"]], s.m, rule)
            prompts = {m: [] for m in methods}
            curves = {m: [] for m in methods}
            scores = {m: [] for m in methods}
            pseudo_acc = []
            for r in tqdm(range(unl.shape[0]), desc=f"autosep {name}", mininterval=2, disable=None):
                row = {m: [] for m in methods}
                for g, classes in enumerate(GROUPS):
                    res = search_group(bb, x[unl[r, g]], y[unl[r, g]], classes, gen, s, group_seed(ctx.seed, r, g), methods)
                    for m in methods:
                        row[m].append(list(res["prompts"][m]))
                        curves[m].append(res["curves"][m])
                        scores[m].append(res["instance_score"][m])
                    pseudo_acc.append(float(np.mean(res["pseudo_labels"] == y[unl[r, g]])))
                for m in methods:
                    prompts[m].append(row[m])
            out[name] = {"generic": list(gen), "prompts": prompts}
            summary[name] = {"instance_score": {m: float(np.mean(v)) for m, v in scores.items()},
                             "majority_vote_pseudo_label_accuracy": float(np.mean(pseudo_acc))}
            for m in methods:
                ctx.run.log_curve(f"{name}.{m}.best_score_by_round", np.mean(curves[m], axis=0).tolist())
        search_cpu_s = time.process_time() - t0
        write_json(ctx.path(PROMPTS), out)
        save_model(ctx.path(MODEL), protos, p.blackbox.model_dump(), out["main"]["prompts"]["autosep"][0], ctx.seed)
        ctx.run.log_model(ctx.path(MODEL), "blackbox-autosep", params={"groups": [list(g) for g in GROUPS],
                                                                       **p.blackbox.model_dump()})
        write_json(ctx.path(TRAIN_METRICS), summary)
        ctx.run.log_metrics({"search_cpu_s": search_cpu_s})
        main_s = summary["main"]["instance_score"]
        print("  instance score (main): " + ", ".join(f"{m} {v:.3f}" for m, v in main_s.items())
              + f"; searches {search_cpu_s:.1f} CPU s", flush=True)


if __name__ == "__main__":
    main()
