"""coral_diffusion prepare: for every verdict seed, the long-tailed digits, the balanced control,
and the real-data classifier.

scikit-learn's 8x8 digits (shipped with the package, nothing downloaded) are split per class into a
balanced held-out test set and a pool, drawn with the seed. From the pool: the long-tailed training
set (exponential profile, class c has n_max * ratio^(-c/9) images) and the balanced control (every
class has the rarest class's count). The classifier that scores generated images (scikit-learn's
MLPClassifier) is trained on the seed's whole pool (real, balanced, every class) and checked on its
test set. A verdict seed is one repetition of the whole experiment: its own split, classifier,
models and draws.

Outputs: data/coral_diffusion/digits.npz and data/coral_diffusion/classifier.npz (keys
``seed|name``, stages/coral_diffusion/arms.py) and reports/coral_diffusion/prepare.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CLASSIFIER, DATA, PREPARE_METRICS


def main() -> None:
    with stage("coral_diffusion", "prepare", PARAMS) as ctx:
        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz
        from stages.common.seeds import run_seeds

        from . import digits
        from .arms import key

        limit_threads()
        p = ctx.params.prepare
        x, y = digits.load()
        done = run_seeds(ctx.seeds, lambda s: digits.prepare_seed(x, y, p, s), what="split and classifier, seed")
        data, clf, figures = {}, {}, {}
        for s, (d, w, f) in done.items():
            data.update({key(s, k): v for k, v in d.items()})
            clf.update({key(s, k): v for k, v in w.items()})
            figures[str(s)] = f
        write_npz(ctx.path(DATA), data)
        write_npz(ctx.path(CLASSIFIER), clf)
        first = figures[str(ctx.seeds[0])]
        write_json(ctx.path(PREPARE_METRICS), {
            "lt_counts": first["lt_counts"], "lt_total": first["lt_total"], "control_per_class": first["control_per_class"],
            "seeds": list(ctx.seeds), "per_seed": figures})
        print(f"  long-tailed counts {first['lt_counts']} ({first['lt_total']} images); control "
              f"{first['control_per_class']} a class; classifier test accuracy per seed "
              + ", ".join(f"{s}: {f['classifier_test_accuracy']:.3f}" for s, f in figures.items()), flush=True)


if __name__ == "__main__":
    main()
