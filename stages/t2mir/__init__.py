"""t2mir: Token-wise and task-wise mixture-of-experts improve an in-context RL transformer (DarkRoom, held-out tasks).

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
