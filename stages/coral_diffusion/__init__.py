"""coral_diffusion: A supervised contrastive loss on the U-Net bottleneck (CORAL) separates tail-class latents from head-class latents in long-tailed diffusion and improves tail samples.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
