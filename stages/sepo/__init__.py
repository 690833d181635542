"""sepo: SEPO: a policy gradient through the concrete score fine-tunes a discrete diffusion model on a non-differentiable reward.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). ``prepare`` draws DNA-like sequences from a Markov chain;
``train`` pre-trains a masked discrete diffusion model on them and fine-tunes it towards a motif
reward with SEPO and RWFT; ``evaluate`` compares exact reward-KL curves, best-of-N and the KL-optimal tilt.
"""
