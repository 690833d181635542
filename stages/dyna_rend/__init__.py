"""dyna_rend: Masked reconstruction plus future prediction through differentiable rendering is a better pre-training for manipulation than none or 2-D pre-training.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
