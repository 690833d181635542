"""rl_vla: RL fine-tuning (PPO) of a vision-language-action policy generalises better than SFT under semantic and execution shifts, with comparable visual robustness; PPO beats GRPO and DPO.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). ``prepare`` records a scripted expert's demonstrations in
a 2-D pick-and-place world and the evaluation episodes of each split; ``train`` fits a small CNN
policy by SFT, then PPO, GRPO and DPO from it; ``evaluate`` compares their success on every split.
"""
