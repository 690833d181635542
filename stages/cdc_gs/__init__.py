"""cdc_gs: Densifying 2-D Gaussian splats where wavelet complexity exceeds primitive density (CDC) beats gradient-driven adaptive density control (ADC) in PSNR at an equal primitive count.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
