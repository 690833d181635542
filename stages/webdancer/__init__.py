"""webdancer: An information-seeking web agent built in four stages (browsing data construction, trajectory sampling, SFT cold start, RL) beats its SFT-only version.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). ``prepare`` builds synthetic websites, questions and a
noisy oracle's filtered trajectories; ``train`` fits a tiny transformer agent by SFT, then RL (and
the controls); ``evaluate`` scores every agent's held-out Pass@1 by question depth.
"""
