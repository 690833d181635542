"""auto_refine: Refining retrieved documents before answering, trained with a retrieval-specific reward, beats search-without-refine on multi-hop QA.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
