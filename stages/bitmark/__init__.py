"""bitmark: A green-list watermark on bit n-grams of a bitwise autoregressive image model is detectable by a z-test, survives mild attacks, and is radioactive: a model trained on watermarked outputs emits detectable outputs.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
