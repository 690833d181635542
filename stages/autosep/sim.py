"""The stand-in black box and AutoSEP's search (numpy only; scikit-learn for the k-means baseline).

The "MLLM" is a frozen nearest-prototype classifier over 8x8 digits: its class knowledge is the
ten class means of a disjoint pre-training split. Looking at an image without guidance it sees a
coarse average-pooled version (``block`` x ``block`` pixel blocks) with a little noise, so it
overlooks fine detail: a systematic error, not a random one. A *description prompt* is a set ``S``
of pixels; the model's *description* of an image under ``S`` is a sharp reading of those pixels,
quantised to ``levels`` levels, with reading noise. Classifying with a description mixes the
coarse look and the description (weight ``desc_weight`` on the description). An instance-level
comparison shows the model an image with its own description and another image's, and asks which
one describes the image: the model re-reads the pixels of ``S`` (noise ``compare_noise``) and
picks the closer description.

AutoSEP (Hong et al., arXiv 2506.03195, official code yq-hong/AutoSEP, read for the method only):
score a prompt by the hit rate of those comparisons over unlabelled images, each paired with two
random others; improve it by a ProTeGi-style beam search whose "textual gradients" come from
failed comparisons. Here a gradient edit adds the pixel where the two confused images differ most
and drops the described pixel that varies least; a "paraphrase" is a random swap.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

GROUPS: tuple[tuple[int, ...], ...] = ((3, 5, 8, 9), (1, 4, 7, 9), (0, 6, 8, 9), (2, 3, 7, 8))
N_PIXELS = 64
Prompt = tuple[int, ...]


def pool(x: np.ndarray, block: int) -> np.ndarray:
    """Average pooling of flat 8x8 images ``x`` (n, 64) over ``block`` x ``block`` blocks:
    (n, (8 // block) ** 2)."""
    if block not in (1, 2, 4, 8):
        raise ValueError(f"pool: block must divide 8 (1, 2, 4 or 8), got {block}")
    x = np.asarray(x, dtype=float)
    g = 8 // block
    return x.reshape(len(x), g, block, g, block).mean(axis=(2, 4)).reshape(len(x), g * g)


def quantize(v: np.ndarray, levels: int) -> np.ndarray:
    """Clip to [0, 1] and round to ``levels`` equally spaced values (0 and 1 included)."""
    if levels < 2:
        raise ValueError(f"quantize: levels must be >= 2, got {levels}")
    return np.round(np.clip(v, 0.0, 1.0) * (levels - 1)) / (levels - 1)


@dataclass(frozen=True)
class Blackbox:
    """The frozen classifier standing in for the MLLM (see the module docstring)."""
    prototypes: np.ndarray          # (10, 64), pixel values in [0, 1]
    block: int = 4
    look_noise: float = 0.05
    read_noise: float = 0.1
    levels: int = 4
    compare_noise: float = 0.3
    desc_weight: float = 0.7

    def look(self, x: np.ndarray, rng: np.random.Generator, noise: float | None = None) -> np.ndarray:
        """The unguided, coarse look at images ``x`` (n, 64)."""
        px = pool(x, self.block)
        return px + (self.look_noise if noise is None else noise) * rng.standard_normal(px.shape)

    def describe(self, x: np.ndarray, prompt: Prompt, rng: np.random.Generator) -> np.ndarray:
        """The description of each image under ``prompt``: its pixels, read sharply (n, m)."""
        v = np.asarray(x, dtype=float)[:, list(prompt)]
        return quantize(v + self.read_noise * rng.standard_normal(v.shape), self.levels)

    def class_scores(self, x: np.ndarray, prompt: Prompt, classes: Sequence[int], rng: np.random.Generator,
                     look_noise: float | None = None) -> np.ndarray:
        """Scores (n, len(classes)), higher is likelier: minus the mean squared distance of the coarse
        look to each class's coarse prototype, mixed with that of the description (if ``prompt``)."""
        protos = self.prototypes[list(classes)]
        look = self.look(x, rng, look_noise)
        coarse = ((look[:, None, :] - pool(protos, self.block)[None]) ** 2).mean(-1)
        if not prompt:
            return -coarse
        desc = self.describe(x, prompt, rng)
        fine = ((desc[:, None, :] - protos[:, list(prompt)][None]) ** 2).mean(-1)
        return -((1 - self.desc_weight) * coarse + self.desc_weight * fine)

    def classify(self, x: np.ndarray, prompt: Prompt, classes: Sequence[int], rng: np.random.Generator,
                 look_noise: float | None = None) -> np.ndarray:
        """The predicted digit of each image (first best class on ties)."""
        s = self.class_scores(x, prompt, classes, rng, look_noise)
        return np.asarray(classes)[np.argmax(s, axis=1)]

    def compare(self, x: np.ndarray, own: np.ndarray, other: np.ndarray, prompt: Prompt,
                rng: np.random.Generator) -> np.ndarray:
        """For each image, does the model pick its own description over the other one? (ties: a coin)"""
        reread = np.asarray(x, dtype=float)[:, list(prompt)]
        reread = reread + self.compare_noise * rng.standard_normal(reread.shape)
        d_own, d_other = ((reread - own) ** 2).sum(1), ((reread - other) ** 2).sum(1)
        coin = rng.random(len(x)) < 0.5
        return np.where(d_own == d_other, coin, d_own < d_other)


def prototypes(x: np.ndarray, y: np.ndarray, n_classes: int = 10) -> np.ndarray:
    """Class means (the black box's "pre-training"): (n_classes, 64)."""
    missing = [c for c in range(n_classes) if not np.any(y == c)]
    if missing:
        raise ValueError(f"prototypes: no image of class {missing}")
    return np.stack([np.asarray(x, dtype=float)[y == c].mean(0) for c in range(n_classes)])


def comparison_pairs(n: int, per_image: int, rng: np.random.Generator) -> np.ndarray:
    """(n * per_image, 2) index pairs (image, another image), every image ``per_image`` times."""
    if n < 2:
        raise ValueError(f"comparison_pairs: needs at least 2 images, got {n}")
    own = np.repeat(np.arange(n), per_image)
    other = (own + rng.integers(1, n, size=len(own))) % n            # never the image itself
    return np.stack([own, other], axis=1)


def instance_score(bb: Blackbox, x: np.ndarray, prompt: Prompt, pairs: np.ndarray, seed: int) -> float:
    """AutoSEP's instance-level score: the mean hit rate of the comparisons ``pairs`` (no labels).
    The same ``seed`` gives the same noise to every prompt (common random numbers)."""
    rng = np.random.default_rng(seed)
    desc = bb.describe(x, prompt, rng)
    return float(bb.compare(x[pairs[:, 0]], desc[pairs[:, 0]], desc[pairs[:, 1]], prompt, rng).mean())


def label_score(bb: Blackbox, x: np.ndarray, prompt: Prompt, labels: np.ndarray, classes: Sequence[int],
                seed: int) -> float:
    """Accuracy against ``labels`` (true, pseudo or random): the label-based baselines' score."""
    return float(np.mean(bb.classify(x, prompt, classes, np.random.default_rng(seed)) == labels))


def random_prompt(m: int, rng: np.random.Generator) -> Prompt:
    return tuple(sorted(int(p) for p in rng.choice(N_PIXELS, size=m, replace=False)))


def swap(prompt: Prompt, drop: int, add: int) -> Prompt:
    return tuple(sorted((set(prompt) - {drop}) | {add}))


def random_swap(prompt: Prompt, rng: np.random.Generator) -> Prompt:
    drop = int(rng.choice(prompt))
    add = int(rng.choice([p for p in range(N_PIXELS) if p not in prompt]))
    return swap(prompt, drop, add)


def _least_varying(desc: np.ndarray, prompt: Prompt, rng: np.random.Generator) -> int:
    var = desc.var(axis=0) + 1e-9 * rng.random(len(prompt))          # random tie-break
    return int(prompt[int(np.argmin(var))])


def _most_different(a: np.ndarray, b: np.ndarray, prompt: Prompt, rng: np.random.Generator) -> int:
    diff = np.abs(np.asarray(a, float) - np.asarray(b, float)) + 1e-9 * rng.random(N_PIXELS)
    diff[list(prompt)] = -1.0
    return int(np.argmax(diff))


def pair_edits(bb: Blackbox, x: np.ndarray, prompt: Prompt, n_edits: int, minibatch: int,
               rng: np.random.Generator) -> list[Prompt]:
    """AutoSEP's "textual gradients": run ``minibatch`` comparisons, and from each of ``n_edits``
    sampled failures (image i took image j's description) add the pixel where i and j differ most
    and drop the described pixel that varies least over the minibatch. A random swap where no
    comparison failed."""
    pairs = comparison_pairs(len(x), 1, rng)[rng.choice(len(x), size=min(minibatch, len(x)), replace=False)]
    desc = bb.describe(x, prompt, rng)
    hits = bb.compare(x[pairs[:, 0]], desc[pairs[:, 0]], desc[pairs[:, 1]], prompt, rng)
    failed = pairs[~hits]
    drop = _least_varying(desc[pairs[:, 0]], prompt, rng)
    out = []
    for _ in range(n_edits):
        if len(failed) == 0:
            out.append(random_swap(prompt, rng))
            continue
        i, j = failed[rng.integers(len(failed))]
        out.append(swap(prompt, drop, _most_different(x[i], x[j], prompt, rng)))
    return out


def label_edits(bb: Blackbox, x: np.ndarray, prompt: Prompt, labels: np.ndarray, classes: Sequence[int],
                mode: str, n_edits: int, minibatch: int, rng: np.random.Generator) -> list[Prompt]:
    """The label-based baselines' edits: from each of ``n_edits`` misclassified images (predicted c'
    against label c), add the pixel that best tells c from c' and drop the least varying described
    pixel. ``mode="prototype"``: the pixel where the black box's own class prototypes of c and c'
    differ most (it uses the model's class knowledge, as an MLLM's error analysis would);
    ``mode="pair"``: where the image and a random image labelled c' differ most (image pairs only,
    as AutoSEP's edits)."""
    if mode not in ("prototype", "pair"):
        raise ValueError(f"label_edits: mode must be 'prototype' or 'pair', got {mode!r}")
    idx = rng.choice(len(x), size=min(minibatch, len(x)), replace=False)
    pred = bb.classify(x[idx], prompt, classes, rng)
    wrong = idx[pred != labels[idx]]
    wrong_pred = pred[pred != labels[idx]]
    drop = _least_varying(bb.describe(x[idx], prompt, rng), prompt, rng)
    out = []
    for _ in range(n_edits):
        if len(wrong) == 0:
            out.append(random_swap(prompt, rng))
            continue
        k = rng.integers(len(wrong))
        i, c_pred = wrong[k], wrong_pred[k]
        if mode == "prototype":
            add = _most_different(bb.prototypes[labels[i]], bb.prototypes[c_pred], prompt, rng)
        else:
            pool_j = np.flatnonzero(labels == c_pred)
            if len(pool_j) == 0:
                out.append(random_swap(prompt, rng))
                continue
            add = _most_different(x[i], x[rng.choice(pool_j)], prompt, rng)
        out.append(swap(prompt, drop, add))
    return out


def beam_search(start: Prompt, score: Callable[[Prompt], float], edits: Callable[[Prompt, np.random.Generator], list[Prompt]],
                rounds: int, beam: int, rng: np.random.Generator, paraphrases: int = 1,
                max_expand: int | None = None) -> tuple[Prompt, list[float]]:
    """ProTeGi-style beam search: each round, every prompt of the beam (at most ``max_expand`` of
    them) gets its ``edits`` and ``paraphrases`` random swaps; every candidate is scored (cached)
    and the ``beam`` best are kept. Returns the best prompt and the best score after each round."""
    cache: dict[Prompt, float] = {}

    def sc(p: Prompt) -> float:
        if p not in cache:
            cache[p] = score(p)
        return cache[p]

    current, curve = [start], []
    for _ in range(rounds):
        cands = list(current)
        for p in current[:max_expand]:
            cands += edits(p, rng)
            cands += [random_swap(p, rng) for _ in range(paraphrases)]
        uniq = list(dict.fromkeys(cands))
        uniq.sort(key=lambda p: -sc(p))              # stable: earlier candidates win ties
        current = uniq[:beam]
        curve.append(sc(current[0]))
    return current[0], curve


def majority_vote(bb: Blackbox, x: np.ndarray, classes: Sequence[int], votes: int, noise: float,
                  rng: np.random.Generator) -> np.ndarray:
    """Zero-shot sampled ``votes`` times with look noise ``noise`` (a temperature), majority kept
    (ties: the smallest class index among the most voted)."""
    cls = np.asarray(classes)
    preds = np.stack([bb.classify(x, (), classes, rng, look_noise=noise) for _ in range(votes)])
    counts = np.stack([(preds == c).sum(0) for c in cls], axis=1)
    return cls[np.argmax(counts, axis=1)]


def kmeans_labels(bb: Blackbox, x_unl: np.ndarray, x_test: np.ndarray, classes: Sequence[int], k: int,
                  seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The k-means baseline: cluster the black box's coarse look of the unlabelled images
    (scikit-learn KMeans), name each cluster by the majority of the zero-shot predictions in it, and
    give each image (unlabelled, test) its cluster's name."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(seed)
    emb_unl, emb_test = bb.look(x_unl, rng), bb.look(x_test, rng)
    with threadpool_limits(limits=1):               # 120 points: OpenMP threads only spin-wait
        km = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(emb_unl)
    zs = bb.classify(x_unl, (), classes, rng)
    names = {}
    for c in range(k):
        members = zs[km.labels_ == c]
        vals, counts = np.unique(members, return_counts=True)
        names[c] = int(vals[np.argmax(counts)]) if len(members) else int(classes[0])
    to_name = np.vectorize(names.get)
    return to_name(km.labels_), to_name(km.predict(emb_test))
