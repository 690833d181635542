"""mtl_kd: Distilling single-task RL teachers into one multi-task VRP model generalises to unseen variants and larger sizes; R3C re-construction improves inference.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
