"""purpcode: PurpCode: rule learning then multi-objective RL lowers the insecure-code rate of a code model while keeping utility and not raising over-refusal.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). prepare builds a template code language's prompts and
its SFT and rule-learning sets; train fits tiny transformers (SFT, rule learning, GRPO with PurpCode's
rewards and the ablations); evaluate lints (bandit) and runs (sandbox) their held-out answers.
"""
