"""What the escort_belief stages share besides paths: the belief methods, and the keys of the
arrays in problems.npz and particles.npz."""
from __future__ import annotations

METHODS = ("pf", "svgd", "escort")                       # light-dark and mixture problems
MIXTURE_METHODS = METHODS + ("escort_official",)         # mixture problems only (budget)


def key(seed: int, d: int, name: str) -> str:
    """The key of one seed's array ``name`` at dimension d in problems.npz and particles.npz."""
    return f"s{seed}/d{d}/{name}"


def missing_keys(arrays, seeds, dims, name: str) -> list[str]:
    """The (seed, d) keys of ``name`` that ``arrays`` (an npz's keys) lacks: a file written for
    other seeds or dims than the profile's."""
    have = set(arrays)
    return [key(s, d, name) for s in seeds for d in dims if key(s, d, name) not in have]
