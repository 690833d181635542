"""sepo prepare: for every verdict seed, its synthetic DNA-like training sequences (an order-1
Markov chain on ACGT with random transition rows, drawn from ``[seed, 0]``: each seed is its own
"genome") and the chain's exact distribution.

Outputs: data/sepo/sequences.npz (``seeds`` [S], ``x`` [S, n, L], ``start`` [S, 4], ``trans``
[S, 4, 4]) and reports/sepo/prepare.json (``per_seed`` figures).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATA, PREPARE_METRICS


def seed_data(p, seed: int):
    """(sequences, start probabilities, transition matrix) of ``seed``'s Markov chain."""
    import numpy as np

    from .dd import markov_data

    return markov_data(p.n_train, p.length, p.alpha, np.random.default_rng([seed, 0]))


def main() -> None:
    with stage("sepo", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics

        from .dd import all_sequences, markov_probs, motif_reward

        # one BLAS thread: the exact mean reward is a dot product over 4^L sequences, whose sum
        # order (and so its last bits) would otherwise follow the cores this stage is given
        limit_threads()
        p = ctx.params.prepare
        r_all = motif_reward(all_sequences(p.length), p.motif, p.partial_weight)
        out, figures = {}, {}
        for seed in ctx.seeds:
            x, start, trans = seed_data(p, seed)
            out[seed] = (x, start, trans)
            p_data = markov_probs(p.length, start, trans)
            figures[seed] = {"data_mean_reward_exact": float(p_data @ r_all),
                             "data_mean_reward_sampled": float(motif_reward(x, p.motif, p.partial_weight).mean())}
            print(f"  seed {seed}: {p.n_train} sequences of length {p.length}; data mean reward "
                  f"{figures[seed]['data_mean_reward_exact']:.3f}", flush=True)
        write_npz(ctx.path(DATA), {"seeds": np.array(ctx.seeds), "x": np.stack([out[s][0] for s in ctx.seeds]),
                                   "start": np.stack([out[s][1] for s in ctx.seeds]),
                                   "trans": np.stack([out[s][2] for s in ctx.seeds])})
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(
            figures, n_train=p.n_train, length=p.length, sequences=4 ** p.length, reward_max=float(r_all.max())))


if __name__ == "__main__":
    main()
