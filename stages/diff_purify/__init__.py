"""diff_purify: Adversary-aware purification (a score prior plus a learned score of adversarial perturbations) gives higher robust accuracy than prior-only purification and no defence, at a small cost in clean accuracy.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
