"""What the efg_altpg stages share besides paths: the names of the prepared games, where each
verdict seed's random games lie, how to load one as a pyspiel game, and the policy
parametrisations every game is run with."""
from __future__ import annotations

from pathlib import Path

VARIANTS = ("direct", "softmax", "npg")


def random_game_names(count: int) -> list[str]:
    return [f"random_{i}" for i in range(count)]


def seed_dir(games_dir: Path, seed: int) -> Path:
    """The folder of verdict seed ``seed``'s random games (Kuhn and Leduc, the same for every
    seed, lie in ``games_dir`` itself)."""
    return Path(games_dir) / f"seed_{seed}"


def game_dir(games_dir: Path, name: str, seed: int) -> Path:
    """Where game ``name`` of verdict seed ``seed`` lies."""
    return seed_dir(games_dir, seed) if name.startswith("random_") else Path(games_dir)


def load_game(games_dir, name: str):
    """The pyspiel game behind a prepared game name (random games from their .efg file in
    ``games_dir``, the seed's folder)."""
    import pyspiel

    from .randgame import load

    if name.startswith("random_"):
        return load(Path(games_dir) / f"{name}.efg")
    return pyspiel.load_game(name)
