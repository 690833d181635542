"""rppg_cogload train: for every verdict seed, cognitive-load classifiers (scikit-learn) on every
feature configuration, under participant-disjoint cross-validation, with the controls: remote PPG
alone (the remote-versus-contact must's control), blink features shuffled within each participant
(blink_adds' control), the shared-noise setting, no per-participant normalisation, and permuted
labels. The final model (logistic regression on remote PPG + remote respiration + blink, fit on
every recording of the first verdict seed) is saved as an MLflow pyfunc and registered, with its first three
training rows (z-scored features) as its input example.

Outputs: reports/rppg_cogload/train.json (accuracies, ``per_seed``) and data/rppg_cogload/model.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import MEASURES, MODEL, TRAIN_METRICS, seed_slice

FINAL_CONFIG = "remote_ppg_resp_blink"


def features(m, setting: str, config: str):
    """The (recordings x features) matrix of a configuration in a setting (contact columns from main)."""
    import numpy as np

    from .cogload import CONFIGS

    def col(c):
        return m[f"main/{c}"] if c.startswith("contact_") else m[f"{setting}/{c}"]

    return np.column_stack([col(c) for c in CONFIGS[config]])


def seed_accuracies(m, tp, seed: int) -> dict:
    """One seed's accuracies (``m``: that seed's measures, keys without the ``s<seed>/`` prefix)."""
    import numpy as np

    from stages.common.seeds import rng

    from .cogload import CONFIGS, cv_accuracy, global_standardise, permute_within, zscore_within

    y, g = m["label"].astype(int), m["participant"]

    def acc(x, clf="lr", labels=None):
        return cv_accuracy(x, y if labels is None else labels, g, clf, tp.folds, seed, tp.rf_trees)

    out = {"main": {clf: {c: acc(zscore_within(features(m, "main", c), g), clf) for c in CONFIGS}
                    for clf in tp.classifiers}}
    out["shared_noise"] = {"lr": {c: acc(zscore_within(features(m, "shared_noise", c), g)) for c in CONFIGS}}
    xb = features(m, "main", FINAL_CONFIG)
    xb[:, -1] = permute_within(xb[:, -1], g, rng(seed, 2))
    contact = features(m, "main", "contact")
    perms = [acc(zscore_within(contact, g), labels=permute_within(y, g, rng(seed, 3, k))) for k in range(tp.permutations)]
    out["controls"] = {"blink_shuffled_lr": acc(zscore_within(xb, g)),
                       "contact_no_normalisation_lr": acc(global_standardise(contact)),
                       "remote_no_normalisation_lr": acc(global_standardise(features(m, "main", FINAL_CONFIG))),
                       "contact_permuted_labels_lr": perms,
                       "contact_permuted_labels_lr_mean": float(np.mean(perms))}
    return out


def main() -> None:
    with stage("rppg_cogload", "train", PARAMS) as ctx:
        from stages.common.device import limit_threads

        limit_threads()            # one BLAS thread: small problems, shared cores
        import json
        import tempfile
        import time

        import numpy as np
        import pandas as pd

        from stages.common.io import write_json
        from stages.common.mlmodel import pinned, save_pyfunc
        from stages.common.seeds import run_seeds

        from .cogload import CONFIGS, make_classifier, zscore_within

        p = ctx.params.train
        allm = dict(np.load(ctx.path(MEASURES)))
        t0 = time.process_time()
        res = run_seeds(ctx.seeds, lambda s: seed_accuracies(seed_slice(allm, s), p, s), what="train seed")
        cv_s = time.process_time() - t0

        # the final model: LR on the configuration the paper headlines, fit on every recording of the first seed
        first = ctx.seeds[0]
        m = seed_slice(allm, first)
        y, g = m["label"].astype(int), m["participant"]
        x = zscore_within(features(m, "main", FINAL_CONFIG), g)
        pipe = make_classifier("lr", first).fit(x, y)
        scaler, lr = pipe[0], pipe[-1]
        spec = {"features": CONFIGS[FINAL_CONFIG], "mean": scaler.mean_.tolist(), "scale": scaler.scale_.tolist(),
                "coef": lr.coef_[0].tolist(), "intercept": float(lr.intercept_[0])}
        with tempfile.TemporaryDirectory() as tmp:
            spec_path = f"{tmp}/model.json"
            with open(spec_path, "w") as f:
                json.dump(spec, f, indent=1)
            save_pyfunc(ctx.path(MODEL), ctx.path("stages/rppg_cogload/pyfunc.py"), {"spec": spec_path},
                        requirements=pinned("numpy", "pandas"),
                        input_example=pd.DataFrame(x[:3], columns=CONFIGS[FINAL_CONFIG]))
        ctx.run.log_model(ctx.path(MODEL), "load-classifier", params={"config": FINAL_CONFIG, "rows": len(y),
                                                                      "seed": first})
        write_json(ctx.path(TRAIN_METRICS), {"seeds": list(ctx.seeds), "per_seed": {str(s): r for s, r in res.items()},
                                             "final_model": {"seed": first,
                                                             "train_accuracy": float(np.mean(pipe.predict(x) == y))}})
        ctx.run.log_metrics({"cv_cpu_s": cv_s})
        for s, r in res.items():
            lr_main = r["main"]["lr"]
            print(f"  seed {s} LR accuracy: " + ", ".join(f"{c} {a:.3f}" for c, a in lr_main.items()), flush=True)
        print(f"  cross-validations {cv_s:.1f} s CPU", flush=True)


if __name__ == "__main__":
    main()
