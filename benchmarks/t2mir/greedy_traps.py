"""t2mir diagnosis (after the run; not part of the study's checks): why a model with high held-out
action accuracy can earn little return. For the trained dense and T2MIR models of a repository
copy, on the evaluate stage's held-out episodes: greedy return, return when actions are sampled
from the softmax, the share of episodes ending off the goal, the share of those where the greedy
action there is "stay" (a trap: the greedy policy never leaves), and the greedy return per task.
Run from a repository root after `dvc repro stages/t2mir/dvc.yaml`:
    python -m benchmarks.t2mir_greedy_traps SEED"""
import sys

import numpy as np
import torch

from stages.t2mir.env import step_states
from stages.t2mir.icl import encode, load_model, sample_from_pools
from stages.t2mir.run import rollout_returns
from stages.t2mir.train import load_tasks


def main() -> None:
    torch.set_num_threads(1)
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    k, horizon, episodes = 40, 20, 50                       # the default profile's sizes
    t = load_tasks("data/t2mir/tasks.npz")
    size, (goals, pools) = t["size"], t["test"]
    for v in ("dense", "t2mir"):
        m, _ = load_model(f"data/t2mir/models/{v}.pt", f"data/t2mir/models/{v}.json")
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
