"""sepo prepare: the synthetic DNA-like training sequences (an order-1 Markov chain on ACGT with
random transition rows, seeded) and the chain's exact distribution.

Outputs: data/sepo/sequences.npz (``x`` [n, L], ``start``, ``trans``) and reports/sepo/prepare.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATA, PREPARE_METRICS


def main() -> None:
    with stage("sepo", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from .dd import all_sequences, markov_data, markov_probs, motif_reward

        p = ctx.params.prepare
        rng = np.random.default_rng([ctx.seed, 0])
        x, start, trans = markov_data(p.n_train, p.length, p.alpha, rng)
        write_npz(ctx.path(DATA), {"x": x, "start": start, "trans": trans})
        p_data = markov_probs(p.length, start, trans)
        r_all = motif_reward(all_sequences(p.length), p.motif, p.partial_weight)
        write_json(ctx.path(PREPARE_METRICS), {
            "n_train": p.n_train, "length": p.length, "sequences": 4 ** p.length,
            "data_mean_reward_exact": float(p_data @ r_all),
            "data_mean_reward_sampled": float(motif_reward(x, p.motif, p.partial_weight).mean()),
            "reward_max": float(r_all.max())})
        print(f"  {p.n_train} sequences of length {p.length}; data mean reward {p_data @ r_all:.3f} "
              f"(max {r_all.max():.2f})", flush=True)


if __name__ == "__main__":
    main()
