"""auto_refine: Refining retrieved documents before answering, trained with a retrieval-specific reward, beats search-without-refine on multi-hop QA.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). ``prepare`` generates a small knowledge base of facts and
distractors with one- and two-hop questions; ``train`` fits a tiny policy per arm (refine with and
without the retrieval reward, search-without-refine) by SFT then GRPO over BM25 retrieval;
``evaluate`` scores each arm's held-out exact match and search quality.
"""
