"""The models the study trains for every verdict seed, and where each seed's data sits in the
prepare stage's files (shared by the train and evaluate stages, and the benchmarks).

Per seed, five models from the same initial weights, batches and noise (the arms of a seed are
paired; stages/coral_diffusion/ddpm.py, train_stacked):

* long-tailed data (``lt``): ``ddpm`` (no contrastive term), ``coral`` (CORAL: SupCon on the
  projected bottleneck with the images' classes) and ``shuffled`` (the control: the same term with
  the classes permuted over the training images, :func:`shuffled_labels`: CORAL's loss and weight with
  the class information taken out);
* the balanced control data (``bal``, every class at the rarest class's count): ``ddpm`` and ``coral``.
"""
from __future__ import annotations

ARMS = {"lt": ("ddpm", "coral", "shuffled"), "bal": ("ddpm", "coral")}
SET_NAMES = {"lt": "long-tailed", "bal": "balanced control"}


def jobs_of(seeds: list[int]) -> list[tuple[int, str, str]]:
    """Every (seed, data set, arm), in the order the stack holds them."""
    return [(s, name, arm) for s in seeds for name, arms in ARMS.items() for arm in arms]


def key(seed: int, *parts: str) -> str:
    """A file key of one seed: ``seed|part|...`` (digits.npz: ``0|lt_x``; models.pt: ``0|lt|coral``)."""
    return "|".join([str(seed), *parts])


def seed_data(arrays, seed: int) -> dict:
    """One seed's split from digits.npz (``test_x``, ``lt_y``, ...) or classifier.npz (``w1``, ...)."""
    prefix = f"{seed}|"
    out = {k[len(prefix):]: arrays[k] for k in list(arrays.keys()) if k.startswith(prefix)}
    if not out:
        raise KeyError(f"seed {seed} is not in the prepare stage's files (seeds there: "
                       f"{sorted({int(k.split('|')[0]) for k in list(arrays.keys())})})")
    return out


def shuffled_labels(y, seed: int):
    """The control arm's contrastive labels: the training labels permuted over the images with the
    seed's own generator (stream 5): every class keeps its count, no label is the image's own class
    but by chance."""
    import numpy as np

    from stages.common.seeds import rng

    return rng(seed, 5).permutation(np.asarray(y))


def training_jobs(data: dict, seeds: list[int]) -> list[dict]:
    """ddpm.train_stacked's jobs for ``seeds`` (``data``: seed -> its split), in :func:`jobs_of`'s order."""
    out = []
    for s, name, arm in jobs_of(seeds):
        x, y = data[s][f"{name}_x"], data[s][f"{name}_y"]
        con = None if arm == "ddpm" else y if arm == "coral" else shuffled_labels(y, s)
        out.append({"x": x, "y": y, "seed": s, "con_y": con})
    return out


def noise_seed(seed: int, stream: int) -> int:
    """The seed of one of a verdict seed's noise streams (1: the encodings of the overlap, 2: the
    sampler), through numpy's SeedSequence: streams of different seeds never coincide."""
    import numpy as np

    return int(np.random.SeedSequence([seed, stream]).generate_state(1)[0])
