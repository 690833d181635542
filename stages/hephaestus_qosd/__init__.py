"""hephaestus_qosd: A generative framework (path-stressing heuristic, conditional VAE mixture, RL refinement) finds cheaper edge-weight perturbations that push every s-t path above a threshold, under non-linear edge costs, than classical path-perturbation baselines.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
