"""hephaestus_qosd: A generative framework (path-stressing heuristic, conditional VAE mixture, RL refinement) finds cheaper edge-weight perturbations that push every s-t path above a threshold, under non-linear edge costs, than classical path-perturbation baselines.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). The graphs are generated (grid, Erdos-Renyi, Waxman);
train fits the mixture of conditional VAEs (Morph) to Forge + local-search labels; evaluate runs a
PATHPERTURB-style greedy baseline, Forge, two Morph ablations and Forge -> Morph -> Refine, and
compares their costs with the exact optimum (HiGHS, on graphs of at most ``milp_max_nodes`` nodes).
"""
