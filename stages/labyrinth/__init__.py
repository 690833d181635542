"""labyrinth: Behaviour cloning memorises training mazes but fails on verifiably distinct test mazes.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
