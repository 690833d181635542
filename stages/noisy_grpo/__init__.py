"""noisy_grpo: Noise-injected visual exploration plus a Bayesian advantage (noise level as prior) makes GRPO generalise better out of distribution.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
