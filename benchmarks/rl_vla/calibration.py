"""rl_vla calibration, on calibration seeds only (>= 1000, never a verdict seed): every method gets
the same tuning budget, and the checks are tried with their control before registration.

    nice -n 10 python benchmarks/rl_vla/calibration.py grid  [--seeds 1000,1001] [--set key=JSON ...]
    nice -n 10 python benchmarks/rl_vla/calibration.py check [--seeds 1002,1003,1004] [--set key=JSON ...]

``grid``: per calibration seed, SFT over learning rate {2e-3, 4e-3} x epochs {15, 25}; from the
chosen SFT, each fine-tuning arm (PPO, GRPO, DPO and the control ``sft_more``) over learning rate
{3e-4, 1e-3} x epochs {1, 2}, every arm at the profile's environment-step budget: four settings
for every method. Each
setting is scored by its in-distribution success (the training split's evaluation episodes, at the
evaluation temperature): the criterion a practitioner tunes on, not the shifted splits the claims
read. Prints each setting's success per seed, its mean and CPU seconds, and the choice per arm:
the cheapest setting (fewest epochs) within one binomial standard error of the best mean.

``check``: the study's own per-seed functions (prepare, train, evaluate) with the profile's
settings (plus ``--set``) on the given seeds; prints the claims' per-seed figures, those of the
control and the CPU seconds of each part.

``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds, a grid
of two settings per arm.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common.calibration import cpu_self, parse_seeds, seed_parser, study_params  # noqa: E402

SFT_GRID = [(lr, ep) for lr in (2e-3, 4e-3) for ep in (15, 25)]
RL_GRID = [(lr, ep) for lr in (3e-4, 1e-3) for ep in (1, 2)]
ARMS = ("ppo", "grpo", "dpo", "sft_more")


def choose(scores: dict, arm: str, settings: list, episodes: int) -> tuple:
    """The one-standard-error rule: of the settings whose mean success is within one binomial
    standard error (``episodes`` episodes in all) of the best, the cheapest (fewest epochs), then
    the best of those. Epochs are what an arm's CPU time grows with; the budget of five seeds is
    tight (README, Calibration)."""
    import numpy as np

    means = {k: float(np.mean(scores[(arm,) + k])) for k in settings}
    top = max(means.values())
    se = (top * (1 - top) / episodes) ** 0.5
    near = [k for k in settings if means[k] >= top - se]
    return min(near, key=lambda k: (k[1], -means[k]))


def grid(p, seeds: list[int], smoke: bool) -> None:
    import numpy as np

    from stages.common.device import limit_threads
    from stages.rl_vla import methods
    from stages.rl_vla.data import eval_seeds, more_demos, sft_demos
    from stages.rl_vla.train import fine_tune, train_sft

    limit_threads()
    sft_grid = SFT_GRID[:2] if smoke else SFT_GRID
    rl_grid = RL_GRID[:2] if smoke else RL_GRID
    env_kw = p.env.model_dump()
    temp = p.evaluate.temperature
    t = p.train
    scores: dict = {}

    def score(policy, seed):
        ep = eval_seeds(seed, p.prepare.n_eval)["train"]
        return float(methods.rollout(policy, "train", ep, env_kw, temp, gen=__import__("torch").Generator().manual_seed(seed))["success"].mean())

    chosen_sft = None
    states = {}
    for seed in seeds:
        data = sft_demos(p, seed)
        for lr, ep in sft_grid:
            c0 = cpu_self()
            sp = t.sft.model_copy(update={"lr": lr, "epochs": ep})
            pol, _ = train_sft(t, sp, env_kw, data, seed)
            s = score(pol, seed)
            scores.setdefault(("sft", lr, ep), []).append(s)
            states[(seed, lr, ep)] = pol
            print(f"seed {seed} sft lr {lr:g} epochs {ep}: train success {s:.3f} ({cpu_self() - c0:.1f} CPU s)", flush=True)
    chosen_sft = choose(scores, "sft", sft_grid, len(seeds) * p.prepare.n_eval)
    print(f"chosen sft: lr {chosen_sft[0]:g} epochs {chosen_sft[1]} (mean train success "
          f"{np.mean(scores[('sft',) + chosen_sft]):.3f})", flush=True)
    from stages.rl_vla.policy import state_bytes

    for seed in seeds:
        sft_state = state_bytes(states[(seed, *chosen_sft)])
        more, _ = more_demos(p, seed)
        for arm in ARMS:
            for lr, ep in rl_grid:
                c0 = cpu_self()
                tt = t.model_copy(update={arm: getattr(t, arm).model_copy(update={"lr": lr, "epochs": ep})})
                pol, _ = fine_tune(arm, tt, env_kw, sft_state, more, seed)
                s = score(pol, seed)
                scores.setdefault((arm, lr, ep), []).append(s)
                print(f"seed {seed} {arm} lr {lr:g} epochs {ep}: train success {s:.3f} ({cpu_self() - c0:.1f} CPU s)", flush=True)
    print("\nsetting                     mean train success (per seed)")
    for k, v in scores.items():
        print(f"  {k[0]:9s} lr {k[1]:<7g} epochs {k[2]:<3d} {np.mean(v):.3f}  ({', '.join(f'{x:.3f}' for x in v)})")
    for arm in ("sft",) + ARMS:
        b = choose(scores, arm, sft_grid if arm == "sft" else rl_grid, len(seeds) * p.prepare.n_eval)
        print(f"chosen {arm}: lr {b[0]:g} epochs {b[1]}", flush=True)


def check(p, seeds: list[int]) -> None:
    import numpy as np

    from stages.common.device import limit_threads
    from stages.rl_vla.evaluate import evaluate_seed, summarise
    from stages.rl_vla.prepare import prepare_seed
    from stages.rl_vla.train import train_seed

    limit_threads()
    rows = {}
    for seed in seeds:
        c0 = cpu_self()
        data, more, episodes, _ = prepare_seed(p, seed)
        c1 = cpu_self()
        policies, _, cpu = train_seed(p, data, more, seed)
        c2 = cpu_self()
        success = evaluate_seed(policies, episodes, p, seed)
        m = summarise(success)
        c3 = cpu_self()
        rows[seed] = m
        print(f"seed {seed}: CPU s prepare {c1 - c0:.1f}, train {c2 - c1:.1f} ({', '.join(f'{k} {v:.1f}' for k, v in cpu.items())}), "
              f"evaluate {c3 - c2:.1f}", flush=True)
        for mth, by in m["success"].items():
            print(f"    {mth:10s} " + " ".join(f"{s} {v:.3f}" for s, v in by.items() if v is not None), flush=True)
    print("\nper-seed figures (arm minus sft, paired):")
    for arm in ("ppo", "sft_more", "grpo", "dpo"):
        for split in ("train", "semantic", "execution", "visual"):
            v = [rows[s][f"{arm}_minus_sft"][split] for s in seeds]
            print(f"  {arm:9s} - sft {split:9s}: " + " ".join(f"{x:+.3f}" for x in v) + f"  mean {np.mean(v):+.3f}")
    for other in ("grpo", "dpo"):
        v = [rows[s][f"ppo_minus_{other}"]["train"] for s in seeds]
        print(f"  ppo - {other} train: " + " ".join(f"{x:+.3f}" for x in v) + f"  mean {np.mean(v):+.3f}")


def main() -> None:
    ap = seed_parser(__doc__.split("\n")[0], sets=True)
    ap.add_argument("phase", nargs="?", default="grid", choices=("grid", "check"), help="grid (default) or check")
    a, seeds = parse_seeds(ap)
    from stages.rl_vla.params import PARAMS

    p = study_params("rl_vla", PARAMS, a)
    t0 = time.perf_counter()
    if a.phase == "grid":
        grid(p, seeds, a.smoke)
    else:
        check(p, seeds)
    print(f"done in {time.perf_counter() - t0:.1f} s wall, {cpu_self():.1f} CPU s", flush=True)


if __name__ == "__main__":
    main()
