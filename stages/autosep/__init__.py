"""autosep: Unsupervised description-prompt learning with an instance-level score improves a black-box classifier's fine-grained zero-shot accuracy (+13% over zero-shot, +3% over the best unsupervised baseline).

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
