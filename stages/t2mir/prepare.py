"""t2mir prepare: the data, generated from the seed and saved as a Hugging Face DatasetDict.

Outputs: data/t2mir/dataset (splits ``train`` and ``test``: ``x`` and ``y``) and
reports/t2mir/prepare.json (sizes).
"""
from __future__ import annotations

from stages.common.stage import stage

from .params import PARAMS
from .paths import DATASET, PREPARE_METRICS


def generate(n: int, dim: int, noise: float, w, rng):
    """``n`` examples of y = x . w + noise, x standard normal."""
    import numpy as np

    x = rng.standard_normal((n, dim))
    return x, x @ w + noise * rng.standard_normal(n)


def main() -> None:
    with stage("t2mir", "prepare", PARAMS) as ctx:
        import numpy as np
        from datasets import Dataset, DatasetDict

        from stages.common.io import atomic_dir, write_json

        p = ctx.params.prepare
        rng = np.random.default_rng([ctx.seed, 0])
        w = rng.standard_normal(p.dim) / np.sqrt(p.dim)
        splits = {}
        for name, n in (("train", p.n_train), ("test", p.n_test)):
            x, y = generate(n, p.dim, p.noise, w, rng)
            splits[name] = Dataset.from_dict({"x": x.tolist(), "y": y.tolist()})
        with atomic_dir(ctx.path(DATASET)) as tmp:
            DatasetDict(splits).save_to_disk(str(tmp))
        write_json(ctx.path(PREPARE_METRICS), {"n_train": p.n_train, "n_test": p.n_test, "dim": p.dim})


if __name__ == "__main__":
    main()
