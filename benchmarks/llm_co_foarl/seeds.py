"""llm_co_foarl: the verdict seeds in one process (as the stages run them) against one process per
seed, and what a seed dimension could save, on calibration seeds only (>= 1000).

    nice -n 10 python -m benchmarks.llm_co_foarl.seeds [--seeds 1000,1001] [--profile default] [--set train.sft_steps=200]
    --smoke: the smoke profile's sizes and two seeds, in seconds (what CI runs).

Both ways run core.train_seed and core.evaluate_seed of every seed on one calibration data set
(data seed 1000, solved once, outside the timing): the stages' way, every seed one after another in
one process (stages.common.seeds.run_seeds: interpreter, imports and torch's start paid once),
against one process per seed (what a DVC matrix stage over seeds would run). It prints both CPU
times, their ratio, and checks that every seed's claim figures are the same either way (a seed's
figures depend on that seed alone).

A seed dimension (the seeds' models stacked and trained as one, stages.common.seeds.stack_modules)
is not used: the entity tables index by where the punctuation is (``nonzero``, data-dependent
shapes that ``torch.vmap`` does not take), and decoding stops each row at its own EOS. What it could
save at most is measured here instead: SFT steps of one model on a batch as large as the seeds'
batches together (the arithmetic of a stacked step, without the per-seed weights) against the
seeds' steps one after another. On one thread the step is bound by its matrix products, so the
ratio stays near 1 (README, Calibration).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, cpu_self, forwarded, one_process_vs_one_per_seed, parse_seeds, seed_parser, study_params,
    write_one_seed)


def one_seed(data: dict, p, seed: int) -> dict:
    """The claim figures of one seed (train and evaluate, as the stages)."""
    from stages.llm_co_foarl import core

    tr = core.train_seed(data, p.train, seed, log=lambda m: None)
    return core.evaluate_seed(tr["models"], data, p.evaluate.samples, seed, log=lambda m: None)["claim"]


def stacked_bound(data: dict, p, seeds: list[int], steps: int) -> tuple[float, float]:
    """CPU seconds of ``steps`` SFT steps per seed one after another, and of ``steps`` steps on a
    batch len(seeds) times as large (one model): the arithmetic a seed dimension would batch."""
    import numpy as np
    import torch

    from stages.llm_co_foarl import core
    from stages.llm_co_foarl.model import sft_loss

    train = {prob: d["train"] for prob, d in data.items()}

    def run(batch: int, repeats: int) -> float:
        torch.manual_seed(seeds[0])
        model = core.make_model(p.train)
        opt = torch.optim.AdamW(model.parameters(), lr=p.train.lr)
        rng = np.random.default_rng([seeds[0], 30])
        batches = [core.sft_batch(train, batch, rng) for _ in range(steps * repeats)]
        t = cpu_self()
        for src, tgt in batches:
            loss = sft_loss(model, src, tgt)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return cpu_self() - t

    run(p.train.batch, 1)                          # warm-up
    return run(p.train.batch, len(seeds)), run(p.train.batch * len(seeds), 1)


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__, sets=True))
    ap.add_argument("--steps", type=int, default=20, help="SFT steps per seed of the stacked bound")
    ap.add_argument("--data", help=argparse.SUPPRESS)                  # child: the calibration data
    a, seeds = parse_seeds(ap, steps=3)

    from stages.common.device import limit_threads
    from stages.llm_co_foarl.params import PARAMS

    limit_threads(1)
    p = study_params("llm_co_foarl", PARAMS, a)
    if a.one is not None:            # child: one seed, figures to --out
        write_one_seed(a, one_seed(json.loads(Path(a.data).read_text()), p, a.one))
        return
    from benchmarks.llm_co_foarl.calibration import calibration_data

    data = calibration_data(p.prepare, 1000, "")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "data.json").write_text(json.dumps(data))
        one_process_vs_one_per_seed(
            seeds, lambda s: one_seed(data, p, s),
            [sys.executable, __file__, *forwarded(a), "--data", f"{tmp}/data.json"],
            label=f"profile {a.profile}{' with ' + ', '.join(a.set) if a.set else ''}",
            what="train + evaluate compute", figures="claim figures", note="imports already paid by this process")
    seq, big = stacked_bound(data, p, seeds, a.steps)
    print(f"  seed-dimension bound, {a.steps} SFT steps a seed: {len(seeds)} seeds' batches of {p.train.batch} "
          f"one after another {seq:.2f} s CPU, one batch of {p.train.batch * len(seeds)} {big:.2f} s CPU "
          f"(ratio {big / seq:.2f})")


if __name__ == "__main__":
    main()
