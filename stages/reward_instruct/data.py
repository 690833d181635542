"""What the reward_instruct stages share besides paths: sklearn's digits as the study scales them
(:func:`load_digits_scaled`), the registered samplers' input example (:func:`example_input`), the
few-step generator runs, in report order (:data:`RUNS`: the keys ``s<seed>_<run>_steps`` and
``s<seed>_<run>_x`` of the samples file train writes and evaluate reads, :func:`sample_key`)."""
from __future__ import annotations

RUNS = ("r0", "distill", "unregularised", "r0_aggressive", "distill_regularised")
# runs the calibration can add (benchmarks/reward_instruct/calibration.py); the stages do not run them
EXTRA_RUNS = ("unregularised_gentle",)


def sample_key(seed: int, key: str) -> str:
    """A seed's array in the samples file (``teacher_ref``, ``r0_x``, ...)."""
    return f"s{seed}_{key}"


def load_digits_scaled():
    """sklearn's digits as float32 images in [-1, 1] (N, 64) and labels (N,)."""
    import numpy as np
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.data / 8.0 - 1.0).astype(np.float32), d.target.astype(np.int64)


def example_input(folder, seed: int, n: int = 3):
    """The registered samplers' input example: ``n`` real rows of what their predict takes, the
    classes of the first ``n`` digits of seed ``seed``'s judge split (``folder``: that seed's
    models folder, with its split.npz) and that seed as the noise seed (int64 columns ``class``
    and ``seed``)."""
    from pathlib import Path

    import numpy as np
    import pandas as pd

    _, ys = load_digits_scaled()
    judge = np.load(Path(folder) / "split.npz")["judge"][:n]
    return pd.DataFrame({"class": ys[judge].astype(np.int64), "seed": np.full(len(judge), seed, dtype=np.int64)})
