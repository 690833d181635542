"""llm_co_foarl: a sequence model trained by SFT then feasibility-and-optimality-aware RL maps a text CO instance to a near-optimal feasible solution.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
