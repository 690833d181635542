"""repo_safety: expected vs per-prompt (rectified) safety constraints on a contextual bandit.

Peng et al., "Enhancing Safety in Reinforcement Learning with Human Feedback via Rectified
Policy Optimization" (RePO; NeurIPS 2025, arXiv 2410.19933; official code pxyWaterMoon/RePO,
built on PKU-Alignment/safe-rlhf). The study's brief: STUDIES.md, section "repo_safety".
"""
