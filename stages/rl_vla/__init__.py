"""rl_vla: RL fine-tuning (PPO) of a vision-language-action policy generalises better than SFT under semantic and execution shifts, with comparable visual robustness; PPO beats GRPO and DPO.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). Written by ``claimbench new-study``: the skeleton
fits a ridge regression to generated data; replace it with the study's experiment.
"""
