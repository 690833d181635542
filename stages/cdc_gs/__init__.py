"""cdc_gs: Densifying 2-D Gaussian splats where wavelet complexity exceeds primitive density (CDC), against loss-driven densification at an equal primitive count.

Steps: ``prepare`` (the images and their complexity maps, once), ``train`` (four arms on every
verdict seed: ADC, the loss-map baseline, CDC and its shuffled-map control), ``evaluate``
(per-seed metrics and plots for the claims in claims.yaml).
"""
