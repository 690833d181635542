"""mairl_entropy prepare: generate the study's games from the seed and save them.

Outputs: ``data/mairl_entropy/games.npz`` (random general-sum Markov games ``P[g, s, a1, a2, s']``,
``R[g, i, s, a1, a2]``, ``mu0[g, s]``, ``gamma``; the ambiguity example's action-independent
transitions and stakes), ``data/mairl_entropy/card.json`` (what was generated, how), and
``reports/mairl_entropy/prepare.json`` (summary figures).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import MairlParams
from .paths import CARD, GAMES, PREPARE_METRICS


def main() -> None:
    with stage("mairl_entropy", "prepare", MairlParams) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from . import games

        p = ctx.params.prepare
        data = games.generate(ctx.seed, p.n_games, p.n_states, tuple(p.n_actions), p.gamma,
                              p.reward_low, p.reward_high, p.transition_concentration,
                              p.stake_low, p.stake_high)
        write_npz(ctx.path(GAMES), data)
        row_sums = data["P"].sum(axis=-1)
        summary = {
            "n_games": p.n_games, "n_states": p.n_states, "n_actions": list(p.n_actions),
            "gamma": p.gamma, "reward_min": float(data["R"].min()), "reward_max": float(data["R"].max()),
            "transition_row_sum_error": float(np.abs(row_sums - 1).max()),
            "min_transition_prob": float(data["P"].min()),
            "ambiguity_stakes": data["ambiguity_stakes"].tolist(),
        }
        write_json(ctx.path(CARD), {
            "what": "random general-sum two-player Markov games and the ambiguity example's "
                    "transitions/stakes, generated (nothing downloaded)",
            "generator": "stages/mairl_entropy/games.py: generate(seed, ...) with "
                         "numpy SeedSequence([common.seed, 0x4D41])",
            "seed": ctx.seed, "params": p.model_dump(),
            "arrays": {k: list(v.shape) for k, v in data.items()},
            **summary})
        write_json(ctx.path(PREPARE_METRICS), summary)
        print(f"  {p.n_games} games, {p.n_states} states, actions {p.n_actions}, gamma {p.gamma}; "
              f"rewards in [{summary['reward_min']:.3f}, {summary['reward_max']:.3f}]", flush=True)


if __name__ == "__main__":
    main()
