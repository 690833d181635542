"""t2mir: Token-wise and task-wise mixture-of-experts improve an in-context RL transformer (DarkRoom, held-out tasks).

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). ``prepare`` splits DarkRoom goal cells into training and
held-out tasks with random-policy transition pools; ``train`` fits four in-context transformers
(dense, token MoE, task MoE, T2MIR); ``evaluate`` scores their actions and rollouts on held-out tasks.
"""
