"""t2mir diagnosis (after the run; not part of the study's checks): why a model with high held-out
action accuracy can earn little return. For the trained dense and T2MIR models of a repository
copy, on the evaluate stage's held-out episodes: greedy return, return when actions are sampled
from the softmax, the share of episodes ending off the goal, the share of those where the greedy
action there is "stay" (a trap: the greedy policy never leaves), and the greedy return per task.
Run from a repository root after `dvc repro stages/t2mir/dvc.yaml`:
    python -m benchmarks.t2mir.greedy_traps SEED
``--smoke`` runs it at tiny sizes in seconds (what CI runs): no stage outputs needed, it trains tiny
dense and T2MIR models on a tiny task set in a temp folder (written as the stages write them) first."""
import argparse
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.t2mir.env import step_states
from stages.t2mir.icl import encode, load_model, load_tasks, sample_from_pools
from stages.t2mir.run import rollout_returns


def tiny_stand_in(folder: Path, k: int) -> None:
    """``folder``/tasks.npz and ``folder``/models/s<seed>/{dense,t2mir}.pt with their configs, as the
    prepare and train stages write them, at tiny sizes (3 training steps) for calibration seed 1000:
    the smoke's stand-in for a run's outputs."""
    from stages.common.io import write_npz
    from stages.t2mir.icl import MODEL_KEYS
    from stages.t2mir.run import prepare_seed, train_model

    size, seed = 4, 1000
    arrays = {f"s{seed}/{key}": v for key, v in prepare_seed(size, 0.25, 20, seed).items()}
    write_npz(folder / "tasks.npz", {**arrays, "seeds": np.array([seed])})
    cfg = dict(steps=3, tasks_per_batch=4, contexts_per_task=2, k=k, lr=3e-3, d=16, heads=2, layers=1, n_token=4,
               n_task=4, top_k=2, hidden=8, balance_w=0.1, contrast_w=0.01, tau=0.1)
    (folder / "models" / f"s{seed}").mkdir(parents=True)
    t = load_tasks(folder / "tasks.npz", seed)
    for v in ("dense", "t2mir"):
        model, _ = train_model(size, v, *t["train"], seed=seed, **cfg)
        torch.save(model.state_dict(), folder / "models" / f"s{seed}" / f"{v}.pt")
        (folder / "models" / f"{v}.json").write_text(json.dumps(
            {"size": size, "k": k, "variant": v, **{key: cfg[key] for key in MODEL_KEYS}}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seed", nargs="?", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    limit_threads(1)
    seed = a.seed
    k, horizon, episodes = 40, 20, 50                       # the default profile's sizes
    data = Path("data/t2mir")
    if a.smoke:                    # the same code path at tiny sizes (figures meaningless)
        k, horizon, episodes = 8, 6, 3
        data = Path(tempfile.mkdtemp(prefix="t2mir_traps-"))
        seed = 1000
        print("smoke: no stage outputs used; tiny tasks and 3-step models in a temp folder", flush=True)
        tiny_stand_in(data, k)
    try:
        report(data, seed, k, horizon, episodes)
    finally:
        if a.smoke:
            shutil.rmtree(data, ignore_errors=True)


def report(data: Path, seed: int, k: int, horizon: int, episodes: int) -> None:
    t = load_tasks(data / "tasks.npz", seed)
    size, (goals, pools) = t["size"], t["test"]
    for v in ("dense", "t2mir"):
        m, _ = load_model(data / "models" / f"s{seed}" / f"{v}.pt", data / "models" / f"{v}.json")
        r, ti, _ = rollout_returns(m, size, goals, pools, episodes, k, horizon, np.random.default_rng([seed, 1, 3]))
        rng = np.random.default_rng([seed, 1, 3])            # the same contexts and starts, replayed
        ctx = sample_from_pools(pools, ti, goals, size, k, rng)
        start = rng.integers(0, size, size=(len(ti), 2))
        g, gen = goals[ti], torch.Generator().manual_seed(0)
        sampled, s = np.zeros(len(ti)), start.copy()
        for _ in range(horizon):
            with torch.no_grad():
                logits, _ = m(encode(dict(ctx, q=s), size))
            s = step_states(s, torch.multinomial(logits.softmax(-1), 1, generator=gen)[:, 0].numpy(), size)
            sampled += (s == g).all(-1)
        s = start.copy()
        for _ in range(horizon + 1):
            with torch.no_grad():
                a = m(encode(dict(ctx, q=s), size))[0].argmax(-1).numpy()
            if _ < horizon:
                s = step_states(s, a, size)
        off = ~(s == g).all(-1)
        print(f"{v}: greedy return {r.mean():.2f}, sampled {sampled.mean():.2f}; episodes ending off the goal "
              f"{off.mean():.2f}, of which the greedy action there is 'stay' {(a[off] == 4).mean():.2f}; "
              f"greedy return per task {[round(float(r[ti == i].mean()), 1) for i in range(len(goals))]}")


if __name__ == "__main__":
    main()
