"""Running a stage's verdict seeds in one process, and writing their figures.

Seeds are an axis of the pipeline (docs/VERDICTS.md, section 1): a stage that draws anything
runs every verdict seed of the profile (``ctx.seeds``) and writes its figures per seed. Work
that does not depend on the seed (data made with a fixed data seed, a corpus, a closed form)
runs once, outside the seed loop. Three ways, cheapest first where they fit:

* **a seed dimension**: small models are trained as one batched model, one slice per seed.
  :func:`stack_modules` makes the copies (each initialised under its own seed) and stacks their
  parameters with ``torch.func.stack_module_state``; :func:`call_stacked` runs them all in one
  ``torch.vmap``-ed call. Each seed's data draws come from its own generator (:func:`rng`).
* **one process, one seed after another**: :func:`run_seeds` seeds every random source for each
  seed, calls the study's function, prints progress, and returns ``{seed: result}``; the
  process start and the imports are paid once.
* **seeds in shards**: for a study where one seed is expensive, a DVC ``matrix`` stage splits
  the seeds into shards (``matrix: {shard: [0, 1]}``, ``cmd: python -m ... --shard ${item.shard}``):
  DVC makes one stage per shard (``<study>-train@0``, ``@1``), the stage wrapper hands shard i of n
  the seeds ``seeds[i::n]`` (``ctx.seeds``), and the Prefect flow runs the shards side by
  side (``dvc repro`` runs them one after another). A later stage depends on the shards' common
  parent folder and checks it found every seed once (:func:`gather_shards`). A seed's figures are
  the same in any shard (its draws come from its own generators). The shard count is fixed in
  dvc.yaml (DVC cannot interpolate ``common.seeds`` of the profile there); a shard past the
  profile's seeds gets none and writes an empty result.

:func:`per_seed_metrics` lays the results out as the ledger reads them: ``per_seed`` with each
seed's metrics (keys as strings), beside the aggregates (the mean over seeds of every number,
under the same key), and the list of ``seeds``.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Sequence, TypeVar

from stages.common.seeding import seed_everything

R = TypeVar("R")


def gather_shards(found: dict[str, Iterable[int]], seeds: Sequence[int]) -> None:
    """Check that the shards' outputs (``{shard name: seeds it holds}``) hold every verdict seed
    exactly once and no other; raise a ValueError naming what is missing or extra (outputs of
    another profile, a shard that did not run)."""
    seen: dict[int, str] = {}
    for name, held in found.items():
        for s in held:
            if s in seen:
                raise ValueError(f"seed {s} is in two shards' outputs: {seen[s]} and {name}")
            seen[s] = name
    missing = [s for s in seeds if s not in seen]
    extra = sorted(s for s in seen if s not in set(seeds))
    if missing or extra:
        raise ValueError("the shards' outputs do not hold the profile's verdict seeds "
                         f"{list(seeds)}: " + "; ".join(
                             ([f"missing {missing}"] if missing else []) +
                             ([f"extra {extra} (from {sorted({seen[s] for s in extra})})"] if extra else []))
                         + "; run `dvc repro` for the stage that makes them")


def rng(seed: int, *stream: int):
    """A numpy Generator for ``seed`` and a named stream (``rng(seed, 1)`` for data,
    ``rng(seed, 2)`` for noise, ...): streams of one seed are independent of each other, and a
    stream added later leaves the others' draws as they were."""
    import numpy as np

    return np.random.default_rng([seed, *stream])


def torch_generator(seed: int, *stream: int):
    """A torch Generator seeded from ``(seed, *stream)`` through numpy's SeedSequence."""
    import numpy as np
    import torch

    state = int(np.random.SeedSequence([seed, *stream]).generate_state(1, dtype=np.uint64)[0] >> 1)
    return torch.Generator().manual_seed(state)


def run_seeds(seeds: Sequence[int], fn: Callable[[int], R], what: str = "seed",
              progress_s: float = 10.0) -> dict[int, R]:
    """``fn(seed)`` for each verdict seed, one after another in this process; every random
    source (python, numpy, torch) is seeded with the seed first. Prints a line per seed."""
    out: dict[int, R] = {}
    t0 = time.perf_counter()
    for i, seed in enumerate(seeds):
        seed_everything(seed)
        t = time.perf_counter()
        out[seed] = fn(seed)
        print(f"  {what} {seed} ({i + 1}/{len(seeds)}) done in {time.perf_counter() - t:.1f}s "
              f"(total {time.perf_counter() - t0:.1f}s)", flush=True)
    return out


def stack_modules(make: Callable[[], Any], seeds: Iterable[int]):
    """One copy of ``make()`` per seed, each built under ``torch.manual_seed(seed)``, stacked for
    a batched call: ``(params, buffers, base)``. ``params``/``buffers`` map each name to a tensor
    with a leading seed dimension (leaf tensors, trainable as one); ``base`` is a copy on the
    ``meta`` device that :func:`call_stacked` uses for the structure."""
    import copy

    import torch
    from torch.func import stack_module_state

    models = []
    for seed in seeds:
        torch.manual_seed(seed)
        models.append(make())
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    return params, buffers, base


def call_stacked(base, params: dict, buffers: dict, *args, in_dims: Any = 0):
    """Every seed's model on its own slice of ``args`` (``in_dims=0``: a leading seed dimension)
    or on shared inputs (``in_dims=None``), in one ``torch.vmap``-ed call."""
    import torch
    from torch.func import functional_call

    def one(p, b, *a):
        return functional_call(base, (p, b), a)

    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    return torch.vmap(one, in_dims=(0, 0, *dims), randomness="different")(params, buffers, *args)


def _mean_tree(trees: list[Any]) -> Any:
    """The mean over seeds of every number in a list of same-shaped trees (dicts of numbers,
    lists of numbers); other leaves are kept when they agree, else dropped."""
    first = trees[0]
    if isinstance(first, bool) or first is None or isinstance(first, str):
        return first if all(t == first for t in trees) else None
    if isinstance(first, (int, float)):
        if not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in trees):
            return None
        return sum(float(t) for t in trees) / len(trees)
    if isinstance(first, dict):
        keys = [k for k in first if all(isinstance(t, dict) and k in t for t in trees)]
        out = {k: _mean_tree([t[k] for t in trees]) for k in keys}
        return {k: v for k, v in out.items() if v is not None}
    if isinstance(first, list):
        if not all(isinstance(t, list) and len(t) == len(first) for t in trees):
            return None
        out = [_mean_tree([t[i] for t in trees]) for i in range(len(first))]
        return None if any(v is None for v in out) else out
    return None


def per_seed_metrics(results: dict[int, dict[str, Any]], **shared: Any) -> dict[str, Any]:
    """The metrics file's layout: the mean over seeds of every number (same keys), ``shared``
    figures that do not depend on the seed, ``seeds`` and ``per_seed`` (seed keys as strings)."""
    if not results:
        raise ValueError("no seed ran")
    seeds = list(results)
    clash = sorted(set(shared) & {"per_seed", "seeds"})
    if clash:
        raise ValueError(f"reserved metric keys: {clash}")
    return {**_mean_tree([results[s] for s in seeds]), **shared, "seeds": seeds,
            "per_seed": {str(s): results[s] for s in seeds}}
