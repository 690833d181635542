"""dima calibration (claims contract v2): the study's own per-seed functions (prepare.collect_seed,
train.train_seed, baseline.ppo_seed, evaluate.evaluate_seed) on calibration seeds only (>= 1000),
with the profile's params and any ``--set`` changes. Prints per seed the must's figure (seq - joint
state MSE at H, every model early-stopped by the same rule) and its control's (joint_chain - joint),
the shoulds' figures, each model's kept step, the CPU seconds of each part, and over the seeds the
one-sided 95% t-interval of the must's and control's paired differences (the rule of claims.yaml).

    nice -n 10 python benchmarks/dima/calibration.py [--seeds 1000,1001,1002,1003,1004] [--profile default]
        [--set train.patience=0] [--no-returns]

``--smoke``: the smoke profile and two calibration seeds, in seconds (what CI runs). Never a verdict seed.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def interval(xs) -> str:
    import numpy as np
    from scipy import stats

    xs = np.asarray(xs, dtype=float)
    if len(xs) < 2:
        return f"mean {xs.mean():+.4g}"
    half = stats.t.ppf(0.95, len(xs) - 1) * xs.std(ddof=1) / np.sqrt(len(xs))
    return f"mean {xs.mean():+.4g}, one-sided 95% bounds [{xs.mean() - half:+.4g}, {xs.mean() + half:+.4g}]"


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--no-returns", action="store_true", help="skip PPO and the real-env returns (errors only)")
    a, seeds = parse_seeds(ap)
    from stages.common.device import limit_threads
    from stages.dima.baseline import ppo_seed
    from stages.dima.evaluate import evaluate_seed
    from stages.dima.params import PARAMS
    from stages.dima.paths import seed_key
    from stages.dima.prepare import collect_seed
    from stages.dima.train import train_seed

    limit_threads(1)
    p = study_params("dima", PARAMS, a)
    figs: dict[str, list[float]] = {}
    total = {"prepare": 0.0, "train": 0.0, "ppo": 0.0, "evaluate": 0.0}
    for seed in seeds:
        t0 = time.process_time()
        arrays, _ = collect_seed(p.prepare, seed)
        t1 = time.process_time()
        states, config, met = train_seed(_Npz({seed_key(seed, k): v for k, v in arrays.items()}), seed, p.train, p.prepare)
        t2 = time.process_time()
        ppo = None
        if not a.no_returns:
            _, ppo, _ = ppo_seed(p.baseline, p.prepare, p.evaluate.episodes, seed)
        t3 = time.process_time()
        models = _models(states, config)
        p_eval = p.evaluate
        if a.no_returns:
            p_eval = p.evaluate.model_copy(update={"episodes": 1,
                                                   "plan": p.evaluate.plan.model_copy(update={"horizon": 1, "candidates": 2,
                                                                                               "elites": 1, "iterations": 1})})
        m, _, _, _ = evaluate_seed(_Npz({seed_key(seed, k): v for k, v in arrays.items()}), models, seed, p_eval, p.prepare, ppo)
        t4 = time.process_time()
        for name, dt in zip(total, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            total[name] += dt
        row = {"must seq-joint@H": m["main.seq.mse_at_H"] - m["main.joint.mse_at_H"],
               "control joint_chain-joint@H": m["main.joint_chain.mse_at_H"] - m["main.joint.mse_at_H"],
               "seq/joint@H": m["main.seq_over_joint.mse_at_H"], "seq/joint@1": m["main.seq_over_joint.mse_h1"],
               "seq/joint_chain@H": m["main.seq_over_joint_chain.mse_at_H"],
               "N=1 seq/joint@H": m["control.seq_over_joint.mse_at_H"], "rich seq/joint@H": m["rich.seq_over_joint.mse_at_H"]}
        if not a.no_returns:
            row["return seq-joint"] = m["return.seq_minus_joint.mean"]
            row["return seq-random"] = m["return.mpc_seq_minus_random.mean"]
        for k, v in row.items():
            figs.setdefault(k, []).append(v)
        kept = ", ".join(f"{k} {met[f'{k}.best_step']}/{met[f'{k}.steps_run']}" for k in ("main.joint", "main.seq", "main.joint_chain"))
        print(f"seed {seed}: MSE@H joint {m['main.joint.mse_at_H']:.4g} seq {m['main.seq.mse_at_H']:.4g} "
              f"joint_chain {m['main.joint_chain.mse_at_H']:.4g}; kept step/run: {kept}", flush=True)
        print("   " + "; ".join(f"{k} {v:+.4g}" for k, v in row.items()), flush=True)
        print(f"   CPU s: prepare {t1 - t0:.1f}, train {t2 - t1:.1f}, ppo {t3 - t2:.1f}, evaluate {t4 - t3:.1f}", flush=True)
    print(f"over seeds {seeds}:")
    for k, v in figs.items():
        print(f"  {k:28s} {' '.join(f'{x:+.4g}' for x in v)}   {interval(v)}")
    print("  CPU s in all: " + ", ".join(f"{k} {v:.1f}" for k, v in total.items()) + f"; total {sum(total.values()):.1f}")


class _Npz:
    """A dict of arrays that looks like np.load's NpzFile (``files`` and item access)."""

    def __init__(self, d: dict):
        self._d = d
        self.files = list(d)

    def __getitem__(self, k):
        return self._d[k]


def _models(states: dict, config: dict) -> dict:
    """{run.kind: WorldModel} from train_seed's outputs, through the stage's own files' loader."""
    import io
    import json
    import tempfile

    import torch

    from stages.dima.pyfunc_io import load_models

    with tempfile.TemporaryDirectory() as tmp:
        w, c = Path(tmp) / "w.pt", Path(tmp) / "c.json"
        buf = io.BytesIO()
        torch.save({f"s0/{k}": v for k, v in states.items()}, buf)
        w.write_bytes(buf.getvalue())
        c.write_text(json.dumps({"0": config}))
        return load_models(w, c, seed=0)


if __name__ == "__main__":
    main()
