"""reward_instruct seeds as an axis: the teacher DDPM of several seeds (the largest part of a
seed's work) trained as one batched model (a leading seed dimension: stages.common.seeds.
stack_modules / call_stacked, one torch.vmap-ed call a step) against one after another (the stage's
way: diffusion.train_ddpm per seed, in one process), on calibration seeds only (>= 1000).

    nice -n 19 python benchmarks/reward_instruct/seeds.py [--seeds 1000,...] [--steps 300]

Both ways use the profile's teacher sizes (``prepare`` of the profile), the same initial weights
(``torch.manual_seed(seed)``) and the same draws (each seed's own generator, in train_ddpm's
order), so the weights must agree up to float rounding: the script prints the largest difference,
the CPU seconds of each way and their ratio batched / one after another. ``--steps`` teacher steps
are timed (the stage runs ``teacher_steps``; the time per step is what matters). ``--smoke`` runs
it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds, a few steps.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--steps", type=int, default=300, help="teacher steps timed per seed")
    a, seeds = parse_seeds(ap, steps=10)

    import torch
    import torch.nn.functional as F

    from stages.common.device import limit_threads
    from stages.common.optim import Adam
    from stages.common.seeds import call_stacked, stack_modules, torch_generator
    from stages.reward_instruct import diffusion as D
    from stages.reward_instruct.data import load_digits_scaled
    from stages.reward_instruct.params import PARAMS
    from stages.reward_instruct.prepare import RNG_TEACHER

    limit_threads(1)
    p = study_params("reward_instruct", PARAMS, a).prepare
    xs, ys = load_digits_scaled()
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    abar = D.schedule(p.T, p.beta_max)
    print(f"profile {a.profile}: {len(seeds)} seeds {seeds}; teacher epsilon-net {p.hidden} x {p.layers}, "
          f"batch {p.batch}, {a.steps} steps a seed (the stage runs {p.teacher_steps})", flush=True)

    t0 = time.process_time()
    one = []
    for s in seeds:
        torch.manual_seed(s)
        net = D.make_epsnet(p.hidden, p.layers)
        D.train_ddpm(net, x, y, abar, a.steps, p.batch, p.lr, torch_generator(s, RNG_TEACHER))
        one.append(net)
    seq = time.process_time() - t0

    params, buffers, base = stack_modules(lambda: D.make_epsnet(p.hidden, p.layers), seeds)
    opt = Adam(list(params.values()), lr=p.lr)
    gens = [torch_generator(s, RNG_TEACHER) for s in seeds]
    ab = abar.float()
    t0 = time.process_time()
    for _ in range(a.steps):
        inputs, noise = [], []
        for g in gens:                                   # train_ddpm's draws, in its order
            idx = torch.randint(0, len(x), (p.batch,), generator=g)
            t = torch.randint(0, p.T, (p.batch,), generator=g)
            e = torch.randn(p.batch, D.DIM, generator=g)
            a_t = ab[t][:, None]
            xt = a_t.sqrt() * x[idx] + (1 - a_t).sqrt() * e
            inputs.append(torch.cat([xt, F.one_hot(y[idx], D.N_CLASSES).float(), D.time_embedding(t)], 1))
            noise.append(e)
        pred = call_stacked(base, params, buffers, torch.stack(inputs))
        loss = ((pred - torch.stack(noise)) ** 2).mean((1, 2)).sum()     # the sum of the seeds' losses
        opt.zero_grad()
        loss.backward()
        opt.step()
    bat = time.process_time() - t0

    diff = max(float((params[n][i] - w).detach().abs().max()) for i, net in enumerate(one) for n, w in net.named_parameters())
    print(f"  largest weight difference, batched vs one after another: {diff:.2e}")
    print(f"  CPU s: one after another {seq:.2f}, batched {bat:.2f}; ratio batched / one after another "
          f"{bat / seq:.2f} ({'batched' if bat < seq else 'one after another'} is cheaper; the stages run the seeds "
          f"one after another in one process)")


if __name__ == "__main__":
    main()
