"""dima: Revealing agents' actions one at a time in a denoising-like chain gives a more accurate multi-agent world model than conditioning on the joint action.

Steps: ``prepare`` (behaviour trajectories in mpe2's simple_spread), ``train`` (joint, DIMA-style
sequential and joint-chain world models at matched size; then the SB3 PPO baseline), ``evaluate``
(held-out rollout errors, CEM planning through each model in the real env, plots, a rendered
episode). Modules: env (the environment and its gymnasium view), wm (world models), plan (planner).
"""
