"""sepo: SEPO: a policy gradient through the concrete score fine-tunes a discrete diffusion model on a non-differentiable reward.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
