"""reward_instruct: A pre-trained diffusion model becomes a reward-aligned 4-step generator from the reward alone (with parameter regularisation), beating distillation + reward at equal steps.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
