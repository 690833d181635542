"""efg_altpg prepare: the sequence form of each game, checked against OpenSpiel.

For Kuhn / Leduc poker (pyspiel; once, they do not depend on the seed) and, for every verdict
seed (``ctx.seeds``), ``random.count`` random poker-like EFGs drawn from that seed (written as
Gambit .efg files and loaded by OpenSpiel's ``efg_game``), walk the game tree, build the
sequence form (:mod:`stages.efg_altpg.seqform`) and check it before anything trains on it:
the sequence-form value of uniform play must equal OpenSpiel's expected value
(``expected_game_score.policy_value``), and our exploitability of uniform play (and of a
few random policies) must equal ``exploitability.exploitability``.
Writes data/efg_altpg/games/<game>.npz, data/efg_altpg/games/seed_<s>/random_<i>.npz (+ .efg)
and reports/efg_altpg/prepare.json (the random games' checks per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .games import load_game, random_game_names, seed_dir
from .params import EfgAltPGParams
from .paths import GAMES, PREPARE_REPORT


def random_policies(sf, rng, n: int):
    """``n`` random behavioural pairs (Dirichlet(1) at every infoset)."""
    import numpy as np

    out = []
    for _ in range(n):
        pair = []
        for tree in sf.trees:
            z = rng.exponential(size=tree.n_seq)
            z[0] = 1.0
            pi = z / np.concatenate([[1.0], tree.block_sum(z)[tree.seq_inf[1:]]])
            pair.append(pi)
        out.append(tuple(pair))
    return out


def check_game(game, sf, rng, n_random: int = 3) -> dict:
    """Sizes and the agreement of our sequence form with OpenSpiel on uniform and random play."""
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import expected_game_score

    from .seqform import openspiel_exploitability

    uni = tuple(t.uniform() for t in sf.trees)
    os_value = float(expected_game_score.policy_value(
        game.new_initial_state(), [os_policy.UniformRandomPolicy(game)] * 2)[0])
    ours_value = sf.value(*uni)
    ours_expl = sf.exploitability(*uni)
    os_expl = openspiel_exploitability(game, sf, uni)
    diffs = [abs(sf.exploitability(*p) - openspiel_exploitability(game, sf, p))
             for p in random_policies(sf, rng, n_random)]
    return {
        "sequences": [t.n_seq for t in sf.trees], "infosets": [t.n_inf for t in sf.trees],
        "levels": [len(t.levels) for t in sf.trees], "terminals": int(len(sf.t_util)),
        "payoff_nnz": int(sf.A.nnz), "max_abs_payoff": float(abs(sf.t_util).max()),
        "uniform_value": ours_value, "uniform_value_openspiel": os_value,
        "uniform_exploitability": ours_expl, "uniform_exploitability_openspiel": os_expl,
        "max_abs_diff": max([abs(ours_value - os_value), abs(ours_expl - os_expl), *diffs]),
    }


def random_game_seed(seed: int, index: int) -> int:
    """The data seed of a verdict seed's random game: ``index`` counts the games as the study
    always has (the OpenSpiel games first), so seed 0 draws the games it drew before seeds
    became an axis."""
    import numpy as np

    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def write_random_games(p, seed: int, out) -> list[str]:
    """Draw verdict seed ``seed``'s ``p.random.count`` random games (``p``: the prepare params) and
    write them as .efg files into the folder ``out``; their names."""
    from .randgame import write_game

    names = random_game_names(p.random.count)
    r = p.random
    for j, name in enumerate(names):
        write_game(out / f"{name}.efg", random_game_seed(seed, len(p.games) + j),
                   r.signals, r.depth, r.branching, r.stop_prob)
    return names


def main() -> None:
    with stage("efg_altpg", "prepare", EfgAltPGParams) as ctx:
        import numpy as np
        import pyspiel

        from stages.common.io import atomic_dir, write_json
        from stages.common.seeds import per_seed_metrics

        from .seqform import build

        p = ctx.params.prepare
        shared: dict = {}
        per_seed: dict = {}

        def built(tmp_dir, name: str, game, rng) -> dict:
            sf = build(game)
            sf.save(tmp_dir / f"{name}.npz")
            g = check_game(game, sf, rng)
            print(f"  {name}: {g['infosets']} infosets, {g['sequences']} sequences, "
                  f"{g['terminals']} terminals; uniform exploitability {g['uniform_exploitability']:.6f} "
                  f"(OpenSpiel {g['uniform_exploitability_openspiel']:.6f}); max |diff| {g['max_abs_diff']:.2e}",
                  flush=True)
            return g

        with atomic_dir(ctx.path(GAMES)) as tmp:
            # the OpenSpiel games: once (the policies of their check from a fixed check seed)
            for name in p.games:
                shared[name] = built(tmp, name, pyspiel.load_game(name), np.random.default_rng(0))
            for seed in ctx.seeds:
                out = seed_dir(tmp, seed)
                out.mkdir()
                per_seed[seed] = {"random": {}}
                for j, name in enumerate(write_random_games(p, seed, out)):
                    print(f"  seed {seed}:", end="")
                    per_seed[seed]["random"][name] = built(out, name, load_game(out, name),
                                                           np.random.default_rng([seed, j]))
        diffs = [g["max_abs_diff"] for g in shared.values()]
        diffs += [g["max_abs_diff"] for s in per_seed.values() for g in s["random"].values()]
        report = per_seed_metrics(per_seed, games=shared, max_abs_diff=max(diffs),
                                  open_spiel_version=getattr(pyspiel, "__version__", None) or _version("open_spiel"))
        write_json(ctx.path(PREPARE_REPORT), report)


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:  # pragma: no cover
        return None


if __name__ == "__main__":
    main()
