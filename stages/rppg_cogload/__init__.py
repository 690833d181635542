"""rppg_cogload: Fusing remote modalities improves heart-rate estimation (< 3 BPM), and remote PPG + respiration + blink classify cognitive load nearly as well as contact sensing (86.49% vs 87.5%).

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
