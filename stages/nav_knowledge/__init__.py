"""nav_knowledge: inferring which walls a replanning navigator knew from its trajectories (seed 004, 1st abstract, NeurIPS 2025)."""
