"""jsp_multipolicy: K policies sharing one network, trained by self-labels with adaptive imitation intensity, beat a single self-labelled policy (SLIM) on job shops, without a reward function.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
