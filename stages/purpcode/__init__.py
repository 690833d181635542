"""purpcode: PurpCode: rule learning then multi-objective RL lowers the insecure-code rate of a code model while keeping utility and not raising over-refusal.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
