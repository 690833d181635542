"""t2mir: the verdict seeds batched (a seed dimension, torch.vmap over stacked models) vs one
after another, for one training step (forward + backward) of each variant the stages train.

    nice -n 10 python benchmarks/t2mir/seeds.py [--seeds 1000,...,1004] [--reps 5]
    --smoke: the smoke profile and two seeds, in seconds (what CI runs).

Each seed gets its own model (initialised under its seed, stages.common.seeds.stack_modules) and
its own batch of the default sizes; the batched arm runs all seeds' models in one
``call_stacked`` call, the sequential arm one model after another, both on one thread, and only
the cross-entropy part of the loss (the task router's contrastive loss selects rows with a
data-dependent mask, which vmap cannot batch: the batched arm would need a rewritten loss).
Prints the CPU seconds of both and their ratio, and checks that the batched logits equal the
sequential ones. Calibration seeds only (>= 1000): never a verdict seed.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    import warnings

    import numpy as np
    import torch
    import torch.nn.functional as F

    from stages.common.device import limit_threads
    from stages.common.seeds import call_stacked, stack_modules
    from stages.t2mir.icl import ICT, STUDY_VARIANTS, encode, sample_from_pools
    from stages.t2mir.params import PARAMS
    from stages.t2mir.run import prepare_seed, tasks_of

    ap = seed_parser(__doc__)
    ap.add_argument("--reps", type=int, default=5, help="timed steps per arm")
    a, seeds = parse_seeds(ap, argv, reps=2)
    warnings.filterwarnings("ignore", message=".*batching rule.*")
    limit_threads(1)
    p = study_params("t2mir", PARAMS, a)
    t, pr = p.train, p.prepare
    xs, ys = [], []
    for s in seeds:
        tasks = tasks_of(prepare_seed(pr.size, pr.holdout, pr.pool, s))
        goals, pools = tasks["train"]
        rng = np.random.default_rng([s, 9])
        ti = np.repeat(rng.choice(len(goals), size=t.tasks_per_batch), t.contexts_per_task)
        b = sample_from_pools(pools, ti, goals, pr.size, t.k, rng)
        xs.append(encode(b, pr.size))
        ys.append(torch.from_numpy(b["y"]))
    X, Y = torch.stack(xs), torch.stack(ys)
    arch = dict(d=t.d, heads=t.heads, layers=t.layers, n_token=t.n_token, n_task=t.n_task, top_k=t.top_k,
                hidden=t.hidden)
    print(f"profile {a.profile}, calibration seeds {seeds}, {a.reps} steps per arm, one thread", flush=True)
    total_seq = total_bat = 0.0
    for v in STUDY_VARIANTS:
        def make():
            return ICT(pr.size, v, **arch)
        models = []
        for s in seeds:
            torch.manual_seed(s)
            models.append(make())
        params, buffers, base = stack_modules(make, seeds)
        for q in params.values():
            q.requires_grad_(True)
        c0 = time.process_time()
        for _ in range(a.reps):
            outs = []
            for m, x, y in zip(models, xs, ys):
                logits, _ = m(x)
                F.cross_entropy(logits, y).backward()
                outs.append(logits.detach())
        seq = time.process_time() - c0
        c0 = time.process_time()
        for _ in range(a.reps):
            logits, _ = call_stacked(base, params, buffers, X)
            sum(F.cross_entropy(logits[i], Y[i]) for i in range(len(seeds))).backward()
        bat = time.process_time() - c0
        same = torch.allclose(logits.detach(), torch.stack(outs), atol=1e-5)
        total_seq, total_bat = total_seq + seq, total_bat + bat
        print(f"  {v:8s}: one after another {seq:.2f} s CPU, batched {bat:.2f} s CPU, ratio batched / "
              f"sequential {bat / seq:.2f}; batched logits equal the sequential ones: {same}", flush=True)
        if not same:
            raise SystemExit(f"{v}: the batched models do not compute what the sequential ones do")
    print(f"  all variants: ratio batched / sequential {total_bat / total_seq:.2f} "
          f"({'batched is cheaper' if total_bat < total_seq else 'one after another is cheaper: the stages run the seeds so'})")


if __name__ == "__main__":
    main()
