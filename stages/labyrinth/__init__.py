"""labyrinth: Behaviour cloning memorises training mazes but fails on verifiably distinct test mazes.

Steps: ``prepare`` generates train / eval / test mazes with pairwise distinct structures (and
train / test mazes for the partial-view, key-and-door and ice variants); ``train`` fits behaviour
cloning and DAgger to the exact (BFS) expert; ``evaluate`` measures success per split and method,
the expert through the gymnasium environment, and draws the plots the claims in claims.yaml read.
"""
