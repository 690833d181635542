"""rppg_cogload train: cognitive-load classifiers (scikit-learn) on every feature configuration,
under participant-disjoint cross-validation, with the controls: strong head motion, blink features
shuffled within each participant, no per-participant normalisation, and permuted labels. The final
model (logistic regression on remote PPG + remote respiration + blink, fit on every recording) is
saved as an MLflow pyfunc and registered.

Outputs: reports/rppg_cogload/train.json (accuracies) and data/rppg_cogload/model (pyfunc folder).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import MEASURES, MODEL, TRAIN_METRICS

FINAL_CONFIG = "remote_ppg_resp_blink"


def features(m, setting: str, config: str):
    """The (recordings x features) matrix of a configuration in a setting (contact columns from main)."""
    import numpy as np

    from .cogload import CONFIGS

    def col(c):
        return m[f"main/{c}"] if c.startswith("contact_") else m[f"{setting}/{c}"]

    return np.column_stack([col(c) for c in CONFIGS[config]])


def main() -> None:
    with stage("rppg_cogload", "train", PARAMS) as ctx:
        from stages.common.device import limit_threads

        limit_threads()            # one BLAS thread: small problems, shared cores
        import json
        import tempfile
        import time

        import numpy as np

        from stages.common.io import write_json
        from stages.common.mlmodel import pinned, save_pyfunc

        from .cogload import CONFIGS, cv_accuracy, global_standardise, make_classifier, permute_within, zscore_within

        p = ctx.params.train
        m = dict(np.load(ctx.path(MEASURES)))
        y, g = m["label"].astype(int), m["participant"]
        t0 = time.process_time()

        def acc(x, clf="lr", labels=None):
            return cv_accuracy(x, y if labels is None else labels, g, clf, p.folds, ctx.seed, p.rf_trees)

        out = {"main": {clf: {c: acc(zscore_within(features(m, "main", c), g), clf) for c in CONFIGS}
                        for clf in p.classifiers}}
        for setting in ("shared_noise", "high_motion"):
            out[setting] = {"lr": {c: acc(zscore_within(features(m, setting, c), g)) for c in CONFIGS}}
        xb = features(m, "main", FINAL_CONFIG)
        xb[:, -1] = permute_within(xb[:, -1], g, np.random.default_rng([ctx.seed, 2]))
        contact = features(m, "main", "contact")
        perms = [acc(zscore_within(contact, g), labels=permute_within(y, g, np.random.default_rng([ctx.seed, 3, k])))
                 for k in range(p.permutations)]
        out["controls"] = {"blink_shuffled_lr": acc(zscore_within(xb, g)),
                           "contact_no_normalisation_lr": acc(global_standardise(contact)),
                           "remote_no_normalisation_lr": acc(global_standardise(features(m, "main", FINAL_CONFIG))),
                           "contact_permuted_labels_lr": perms,
                           "contact_permuted_labels_lr_mean": float(np.mean(perms))}
        cv_s = time.process_time() - t0

        # the final model: LR on the configuration the paper headlines, fit on every recording
        x = zscore_within(features(m, "main", FINAL_CONFIG), g)
        pipe = make_classifier("lr", ctx.seed).fit(x, y)
        scaler, lr = pipe[0], pipe[-1]
        spec = {"features": CONFIGS[FINAL_CONFIG], "mean": scaler.mean_.tolist(), "scale": scaler.scale_.tolist(),
                "coef": lr.coef_[0].tolist(), "intercept": float(lr.intercept_[0])}
        with tempfile.TemporaryDirectory() as tmp:
            spec_path = f"{tmp}/model.json"
            with open(spec_path, "w") as f:
                json.dump(spec, f, indent=1)
            save_pyfunc(ctx.path(MODEL), ctx.path("stages/rppg_cogload/pyfunc.py"), {"spec": spec_path},
                        requirements=pinned("numpy", "pandas"))
        ctx.run.log_model(ctx.path(MODEL), "load-classifier", params={"config": FINAL_CONFIG, "rows": len(y)})
        out["final_model_train_accuracy"] = float(np.mean(pipe.predict(x) == y))
        write_json(ctx.path(TRAIN_METRICS), out)
        ctx.run.log_metrics({"cv_cpu_s": cv_s})
        lr_main = out["main"]["lr"]
        print("  LR accuracy: " + ", ".join(f"{c} {a:.3f}" for c, a in lr_main.items()) + f" ({cv_s:.1f} s CPU)", flush=True)


if __name__ == "__main__":
    main()
