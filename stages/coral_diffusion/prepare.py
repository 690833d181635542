"""coral_diffusion prepare: the long-tailed digits, the balanced control, and the real-data classifier.

scikit-learn's 8x8 digits (shipped with the package, nothing downloaded) are split per class into a
balanced held-out test set and a pool. From the pool: the long-tailed training set (exponential
profile, class c has n_max * ratio^(-c/9) images) and the balanced control (every class has the
rarest class's count). The classifier that scores generated images (scikit-learn's MLPClassifier)
is trained on the whole pool (real, balanced, every class) and checked on the test set.

Outputs: data/coral_diffusion/digits.npz, data/coral_diffusion/classifier.npz and
reports/coral_diffusion/prepare.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CLASSIFIER, DATA, PREPARE_METRICS


def main() -> None:
    with stage("coral_diffusion", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz

        from . import digits

        limit_threads()
        p = ctx.params.prepare
        x, y = digits.load()
        d = digits.split(x, y, p.test_per_class, p.n_max, p.ratio, ctx.seed)
        clf = digits.fit_classifier(d["pool_x"], d["pool_y"], p.classifier_hidden, ctx.seed)
        test_acc = float(np.mean(digits.classifier_predict(clf.coefs_, clf.intercepts_, d["test_x"]) == d["test_y"]))
        write_npz(ctx.path(DATA), d)
        write_npz(ctx.path(CLASSIFIER), {"w1": clf.coefs_[0], "b1": clf.intercepts_[0],
                                         "w2": clf.coefs_[1], "b2": clf.intercepts_[1]})
        counts = d["counts"].tolist()
        write_json(ctx.path(PREPARE_METRICS), {
            "lt_counts": counts, "lt_total": int(sum(counts)), "control_per_class": int(min(counts)),
            "n_test": int(len(d["test_y"])), "n_pool": int(len(d["pool_y"])), "classifier_test_accuracy": test_acc})
        print(f"  long-tailed counts {counts} ({sum(counts)} images); control {min(counts)} a class; "
              f"classifier test accuracy {test_acc:.3f}", flush=True)


if __name__ == "__main__":
    main()
