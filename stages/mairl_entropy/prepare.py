"""mairl_entropy prepare: generate the games of every verdict seed and save them.

A verdict seed is one independent repetition of the whole study: its own random games (and its
ambiguity example's transitions and stakes), generated from ``SeedSequence([seed, 0x4D41])`` for
every seed of the profile (``ctx.seeds``); seed 0's games are the ones the study had when it ran
one seed.

Outputs: ``data/mairl_entropy/games.npz`` (per seed ``s<seed>/<name>``: random general-sum Markov
games ``P[g, s, a1, a2, s']``, ``R[g, i, s, a1, a2]``, ``mu0[g, s]``, ``gamma``; the ambiguity
example's action-independent transitions and stakes), ``data/mairl_entropy/card.json`` (what was
generated, how), and ``reports/mairl_entropy/prepare.json`` (summary figures, ``per_seed``).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import MairlParams
from .paths import CARD, GAMES, PREPARE_METRICS


def main() -> None:
    with stage("mairl_entropy", "prepare", MairlParams) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics

        from . import games

        p = ctx.params.prepare
        arrays, per_seed, shapes = {}, {}, {}
        for seed in ctx.seeds:
            data = games.generate(seed, p.n_games, p.n_states, tuple(p.n_actions), p.gamma,
                                  p.reward_low, p.reward_high, p.transition_concentration,
                                  p.stake_low, p.stake_high)
            arrays.update({games.seed_key(seed, k): v for k, v in data.items()})
            shapes = {k: list(v.shape) for k, v in data.items()}
            per_seed[seed] = {
                "reward_min": float(data["R"].min()), "reward_max": float(data["R"].max()),
                "transition_row_sum_error": float(np.abs(data["P"].sum(axis=-1) - 1).max()),
                "min_transition_prob": float(data["P"].min()),
                "ambiguity_stakes": data["ambiguity_stakes"].tolist()}
            print(f"  seed {seed}: {p.n_games} games, {p.n_states} states, actions {p.n_actions}, "
                  f"gamma {p.gamma}; rewards in [{per_seed[seed]['reward_min']:.3f}, "
                  f"{per_seed[seed]['reward_max']:.3f}]", flush=True)
        write_npz(ctx.path(GAMES), arrays)
        sizes = {"n_games": p.n_games, "n_states": p.n_states, "n_actions": list(p.n_actions), "gamma": p.gamma}
        write_json(ctx.path(CARD), {
            "what": "random general-sum two-player Markov games and the ambiguity example's "
                    "transitions/stakes, generated for every verdict seed (nothing downloaded)",
            "generator": "stages/mairl_entropy/games.py: generate(seed, ...) with "
                         "numpy SeedSequence([seed, 0x4D41]); arrays keyed s<seed>/<name>",
            "seeds": list(ctx.seeds), "params": p.model_dump(), "arrays_per_seed": shapes})
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(per_seed, **sizes))


if __name__ == "__main__":
    main()
