"""gara_sam: Gated-rank adapters (per-input rank chosen by a learned gate over rank-1 LoRA components) make a frozen segmenter robust to input corruptions without losing clean-image accuracy.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
