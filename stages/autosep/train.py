"""autosep train: for every verdict seed (``ctx.seeds``), the black box's "pre-training" (its class
prototypes on that seed's pre-training share) and every prompt search.

For the main setting and each control setting (experiment.settings), on every repeat and group:
AutoSEP (instance-level score, no labels), the random-score arm (AutoSEP without its score), and
the label-based optimisations (majority-vote pseudo-labels, random labels, true labels as the
reference), all from the generic prompt (experiment.train_seed). The seeds run one after another
in this process (stages.common.seeds.run_seeds; benchmarks/autosep/seeds.py measures it against a
process per seed). The black box with the first seed's AutoSEP prompts is saved and registered as
an MLflow pyfunc model (input example: that seed's first test image of groups 0, 1 and 2).
Outputs: data/autosep/prompts.json (per seed), data/autosep/model, reports/autosep/train.json
(``per_seed``).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, MODEL, PROMPTS, TRAIN_METRICS


def input_example(x, split: dict, groups=(0, 1, 2)):
    """The pyfunc's input example: the first test image of repeat 0 of each of ``groups`` in a seed's
    ``split`` (data.seed_split), as pixel columns ``p0``..``p63`` back on the digits' 0..16 scale
    (float64, as scikit-learn's digits come) and its ``group`` (int64)."""
    import numpy as np
    import pandas as pd

    rows = [int(np.flatnonzero(split["test"][0, g])[0]) for g in groups]
    df = pd.DataFrame(np.round(x[rows] * 16.0), columns=[f"p{i}" for i in range(64)])
    df["group"] = np.asarray(groups, dtype=np.int64)
    return df


def save_model(target, prototypes, blackbox: dict, prompts: list[list[int]], seed: int, example) -> None:
    """The black box and AutoSEP's prompt of each group (repeat 0) as an MLflow pyfunc folder, with
    ``example`` (:func:`input_example`) as its input example, from which MLflow infers its signature."""
    import json
    import tempfile
    from pathlib import Path

    from stages.common.mlmodel import pinned, save_pyfunc

    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "config.json"
        config.write_text(json.dumps({"prototypes": prototypes.tolist(), "blackbox": blackbox,
                                      "prompts": prompts, "seed": seed}, sort_keys=True))
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"config": config},
                    requirements=pinned("numpy"), input_example=example)


def main() -> None:
    with stage("autosep", "train", PARAMS) as ctx:
        import time

        import numpy as np

        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .data import seed_split
        from .experiment import train_seed
        from .sim import GROUPS, prototypes

        p = ctx.params.train
        d = np.load(ctx.path(DATASET))
        x, y = d["x"], d["y"]
        last = [time.perf_counter()]

        def one(seed: int) -> dict:
            def progress(setting: str, r: int) -> None:
                if time.perf_counter() - last[0] >= 5:
                    print(f"    seed {seed} {setting}: repeat {r + 1} searched", flush=True)
                    last[0] = time.perf_counter()
            t0 = time.process_time()
            res = train_seed(x, y, seed_split(d, seed), p, seed, progress)
            res["summary"]["search_cpu_s"] = time.process_time() - t0
            return res

        results = run_seeds(ctx.seeds, one, "seed")
        write_json(ctx.path(PROMPTS), {str(s): r["prompts"] for s, r in results.items()})
        first = ctx.seeds[0]
        split0 = seed_split(d, first)
        protos = prototypes(x[split0["pretrain"]], y[split0["pretrain"]])
        save_model(ctx.path(MODEL), protos, p.blackbox.model_dump(),
                   results[first]["prompts"]["main"]["prompts"]["autosep"][0], first, input_example(x, split0))
        ctx.run.log_model(ctx.path(MODEL), "blackbox-autosep", params={"groups": [list(g) for g in GROUPS],
                                                                       "seed": first, **p.blackbox.model_dump()})
        summary = {s: r["summary"] for s, r in results.items()}
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(summary))
        for name, by_method in results[first]["curves"].items():
            for m in by_method:
                ctx.run.log_curve(f"{name}.{m}.best_score_by_round",
                                  np.mean([r["curves"][name][m] for r in results.values()], axis=0).tolist())
        cpu = sum(v["search_cpu_s"] for v in summary.values())
        ctx.run.log_metrics({"search_cpu_s": cpu})
        for s, v in summary.items():
            print(f"  seed {s} instance score (main): " + ", ".join(
                f"{m} {sc:.3f}" for m, sc in v["main"]["instance_score"].items()), flush=True)
        print(f"  searches {cpu:.1f} CPU s over {len(summary)} seeds", flush=True)


if __name__ == "__main__":
    main()
