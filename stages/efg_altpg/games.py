"""What the efg_altpg stages share besides paths: the names of the prepared games, how to load one
as a pyspiel game, and the policy parametrisations every game is run with."""
from __future__ import annotations

VARIANTS = ("direct", "softmax", "npg")


def random_game_names(count: int) -> list[str]:
    return [f"random_{i}" for i in range(count)]


def load_game(games_dir, name: str):
    """The pyspiel game behind a prepared game name (random games from their .efg file)."""
    import pyspiel

    from .randgame import load

    if name.startswith("random_"):
        return load(games_dir / f"{name}.efg")
    return pyspiel.load_game(name)
