"""coral_diffusion: A supervised contrastive loss on the U-Net bottleneck (CORAL) separates tail-class latents from head-class latents in long-tailed diffusion and improves tail samples.

Steps: ``prepare`` (long-tailed and balanced splits of scikit-learn's 8x8 digits, and a real-data
classifier), ``train`` (class-conditional DDPMs with and without CORAL's contrastive bottleneck loss, on
both splits), ``evaluate`` (tail-head latent overlap and per-class sample quality, plots, a samples grid).
"""
