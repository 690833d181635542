"""dima: Revealing agents' actions one at a time in a denoising-like chain gives a more accurate multi-agent world model than conditioning on the joint action.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
