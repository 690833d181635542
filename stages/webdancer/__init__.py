"""webdancer: An information-seeking web agent built in four stages (browsing data construction, trajectory sampling, SFT cold start, RL) beats its SFT-only version.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
