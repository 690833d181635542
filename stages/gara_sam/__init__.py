"""gara_sam: Gated-rank adapters (per-input rank chosen by a learned gate over rank-1 LoRA components) make a frozen segmenter robust to input corruptions without losing clean-image accuracy.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). The scenes are synthetic shapes, clean and under seen and
unseen corruptions; a small U-Net pre-trained on clean scenes and frozen (the stand-in for SAM) is
adapted by peft's LoRA, GaRA, GaRA with a constant gate and full fine-tuning, and each arm's per-image
IoU is scored per condition, with GaRA's effective rank.
"""
