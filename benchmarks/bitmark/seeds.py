"""bitmark seeds as an axis: the MADE work of the train stage for five seeds, batched (one stacked
model with a leading seed dimension: every weight (S, ...), torch.bmm, one Adam over the stacked
weights, each seed's batches from its own generator) against one seed after another (what the
stage does: ``ar.train`` and ``ar.sample`` per seed, in one process), on calibration seeds only
(>= 1000).

    nice -n 19 python -m benchmarks.bitmark.seeds [--seeds 1000,...] [--steps 300] [--samples 500]

It times in CPU seconds (one thread) ``--steps`` Adam steps of the clean model of every seed, and
sampling ``--samples`` images of every seed's model (256 passes), both ways; it prints the times,
their ratio (batched / one after another) and whether the batched models' weights equal the
sequential ones bit for bit. The stage's sizes are the profile's (``--profile``); the MADE is
compute-bound at these sizes (a 256x256 masked layer on batches of 128), so a seed dimension buys
little: the stage runs the seeds one after another (stages.common.seeds.run_seeds).
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def stacked(models):
    """The models' weights stacked on a leading seed dimension (trainable leaves; masks not)."""
    import torch

    sd = [m.state_dict() for m in models]
    return {k: torch.stack([d[k] for d in sd]).requires_grad_(not k.endswith("mask")) for k in sd[0]}


def forward(P, x, y1h):
    """A one-hidden-layer MADE (stages/bitmark/ar.py) for every seed at once: x (S, N, 256)."""
    import torch

    def lin(name, h):
        return torch.baddbmm(P[f"{name}.bias"][:, None, :], h, (P[f"{name}.weight"] * P[f"{name}.mask"]).transpose(1, 2))

    h = torch.relu(lin("hidden.0", x) + torch.bmm(y1h, P["cond.0.weight"].transpose(1, 2)))
    return lin("out", h) + lin("skip", x) + torch.bmm(y1h, P["cond_out.weight"].transpose(1, 2))


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--steps", type=int, default=300, help="Adam steps per seed (the stage: train.steps)")
    ap.add_argument("--samples", type=int, default=500, help="images sampled per seed (the stage: evaluate.n_samples)")
    a, seeds = parse_seeds(ap, steps=20, samples=40)

    import numpy as np
    import torch

    from benchmarks.common.calibration import study_params
    from stages.bitmark import ar, wm
    from stages.bitmark.params import PARAMS
    from stages.bitmark.prepare import shipped_digits, stratified_split
    from stages.common.device import limit_threads
    from stages.common.optim import Adam
    from stages.common.seeds import rng

    limit_threads(1)
    p = study_params("bitmark", PARAMS, a).train
    if p.layers != 1:
        raise SystemExit("the stacked MADE here has one hidden layer; use a profile with train.layers = 1")
    x, y = shipped_digits()
    q = wm.quantise(x)
    data = {}
    for s in seeds:
        tr, _ = stratified_split(y, 0.2, rng(s, 0))
        data[s] = (torch.as_tensor(wm.encode(q[tr]), dtype=torch.float32), ar.one_hot(y[tr]), y[tr])

    # one seed after another (the stage)
    t0 = time.process_time()
    seq = {}
    for s in seeds:
        seq[s] = ar.build(p.hidden, 1, s)
        ar.train(seq[s], data[s][0].numpy(), data[s][2], a.steps, p.batch, p.lr, p.weight_decay, s, progress=False)
    t_seq = time.process_time() - t0

    # batched: one stacked model, the same initial weights, batches and Adam
    models = [ar.build(p.hidden, 1, s) for s in seeds]
    t0 = time.process_time()
    P = stacked(models)
    opt = Adam([v for v in P.values() if v.requires_grad], lr=p.lr, weight_decay=p.weight_decay)
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    for _ in range(a.steps):
        idx = [torch.randint(0, len(data[s][0]), (min(p.batch, len(data[s][0])),), generator=g) for s, g in zip(seeds, gens)]
        xb = torch.stack([data[s][0][i] for s, i in zip(seeds, idx)])
        yb = torch.stack([data[s][1][i] for s, i in zip(seeds, idx)])
        loss = torch.nn.functional.binary_cross_entropy_with_logits(forward(P, xb, yb), xb, reduction="none").mean((1, 2)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    t_bat = time.process_time() - t0
    same = all(torch.equal(P[k][i].detach(), seq[s].state_dict()[k]) for i, s in enumerate(seeds) for k in P)
    print(f"train: {len(seeds)} seeds x {a.steps} steps (hidden {p.hidden}, batch {p.batch}): one after another "
          f"{t_seq:.2f} CPU s, batched {t_bat:.2f} CPU s, ratio {t_bat / t_seq:.2f}; weights bit-identical: {same}")

    # sampling: 256 passes, every seed's model on its own images
    labels = np.arange(a.samples) % 10
    t0 = time.process_time()
    for s in seeds:
        ar.sample(seq[s], labels, s)
    s_seq = time.process_time() - t0
    t0 = time.process_time()
    with torch.no_grad():
        Pd = {k: v.detach() for k, v in P.items()}
        S, n = len(seeds), len(labels)
        yb = ar.one_hot(labels)[None].expand(S, n, -1).contiguous()
        xb = torch.zeros(S, n, wm.N_BITS)
        gens = [torch.Generator().manual_seed(s) for s in seeds]
        for i in range(wm.N_BITS):
            prob = torch.sigmoid(forward(Pd, xb, yb)[:, :, i])
            u = torch.stack([torch.rand(n, generator=g) for g in gens])
            xb[:, :, i] = (u < prob).float()
    s_bat = time.process_time() - t0
    print(f"sample: {len(seeds)} seeds x {a.samples} images: one after another {s_seq:.2f} CPU s, batched "
          f"{s_bat:.2f} CPU s, ratio {s_bat / s_seq:.2f}")
    print(f"both: one after another {t_seq + s_seq:.2f} CPU s, batched {t_bat + s_bat:.2f} CPU s, "
          f"ratio {(t_bat + s_bat) / (t_seq + s_seq):.2f} (< 1: batching is cheaper)")


if __name__ == "__main__":
    main()
