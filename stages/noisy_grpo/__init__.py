"""noisy_grpo: Noise-injected visual exploration plus a Bayesian advantage (noise level as prior) makes GRPO generalise better out of distribution.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). prepare draws synthetic counting images (in and out of
distribution) with partly wrong reasoning chains; train runs SFT, then GRPO, NoisyGRPO and its two
ablations from that policy; evaluate compares their greedy accuracy with paired intervals.
"""
