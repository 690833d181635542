"""Small random zero-sum extensive-form games with perfect recall, written in Gambit's EFG
format so that OpenSpiel (``efg_game``) loads them and its exploitability and CFR+ apply.

Shape (poker-like, so perfect recall holds by construction): chance deals each player a
private signal in {0..signals-1} (uniformly, independently); then the players act in turn on
a *public* betting tree of at most ``depth`` moves with ``branching`` actions per move, where
each non-root move ends the game with probability ``stop_prob`` (the tree shape is drawn once
and shared by every deal; a tree in which player 2 never acts, every first move having ended
the game, is drawn again). A player's information set is (own signal, public history).
Player 0's payoff at each terminal, for each deal, is uniform on [-1, 1]; player 1 gets minus
that.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


def public_tree(rng: np.random.Generator, depth: int, branching: int, stop_prob: float) -> list[str]:
    """Every public history (strings of action letters), pre-order; leaves are terminals."""
    hist: list[str] = []

    def grow(h: str) -> None:
        hist.append(h)
        if len(h) == depth or (h and rng.random() < stop_prob):
            return
        for a in range(branching):
            grow(h + "abcdefgh"[a])

    grow("")
    return hist


def efg_text(rng: np.random.Generator, signals: int, depth: int, branching: int, stop_prob: float,
             title: str) -> str:
    """The game as Gambit EFG text (pre-order nodes; chance first)."""
    if not (2 <= signals <= 6 and 2 <= depth <= 8 and 2 <= branching <= 8):
        raise ValueError("signals in [2, 6], depth in [2, 8], branching in [2, 8]")
    hists = public_tree(rng, depth, branching, stop_prob)
    while not any(len(h) == 2 for h in hists):     # player 2 never acts: not a two-player game, draw again
        hists = public_tree(rng, depth, branching, stop_prob)
    children = {h: [h + c for c in "abcdefgh"[:branching] if h + c in set(hists)] for h in hists}
    lines = [f'EFG 2 R "{title}" {{ "Player 1" "Player 2" }}', '""']
    deals = [(s0, s1) for s0 in range(signals) for s1 in range(signals)]
    prob = f"1/{len(deals)}"
    lines.append('c "deal" 1 "deal" { ' + " ".join(f'"{s0}{s1}" {prob}' for s0, s1 in deals) + " } 0")
    infoset: list[dict[str, int]] = [{}, {}]
    outcome = [0]

    def node(h: str, s: tuple[int, int], indent: int) -> None:
        pad = "  " * indent
        if not children[h]:
            outcome[0] += 1
            u = float(np.round(rng.uniform(-1.0, 1.0), 6))
            lines.append(f'{pad}t "" {outcome[0]} "z{outcome[0]}" {{ {u!r}, {-u!r} }}')
            return
        pl = len(h) % 2
        key = f"{s[pl]}|{h}"
        num = infoset[pl].setdefault(key, len(infoset[pl]) + 1)
        acts = " ".join(f'"{c[-1]}"' for c in children[h])
        lines.append(f'{pad}p "" {pl + 1} {num} "{key}" {{ {acts} }} 0')
        for c in children[h]:
            node(c, s, indent + 1)

    for s in deals:
        node("", s, 1)
    return "\n".join(lines) + "\n"


def write_game(path: str | Path, seed: int, signals: int, depth: int, branching: int,
               stop_prob: float) -> Path:
    """Draw one game from ``seed`` and write it (atomically) as an .efg file."""
    from stages.common.io import write_text

    rng = np.random.default_rng(seed)
    return write_text(path, efg_text(rng, signals, depth, branching, stop_prob,
                                     f"random poker-like game, seed {seed}"))


def load(path: str | Path):
    """The game as a pyspiel game (OpenSpiel's efg_game)."""
    import pyspiel

    return pyspiel.load_game("efg_game", {"filename": str(path)})
