"""dyna_rend: Masked reconstruction plus future prediction through differentiable rendering is a better pre-training for manipulation than none or 2-D pre-training.

Steps: ``prepare`` (generated voxel table-top scenes and place-voxel demos), ``train`` (one encoder
pre-trained per arm: none, 2-D masked images, 2-D video prediction, 3-D reconstruction, DynaRend's
masked future rendering; then behaviour cloning on the demos), ``evaluate`` (success in distribution
and under perturbations, the pretext figures, plots).
"""
