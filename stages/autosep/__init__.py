"""autosep: Unsupervised description-prompt learning with an instance-level score improves a black-box classifier's fine-grained zero-shot accuracy (+13% over zero-shot, +3% over the best unsupervised baseline).

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). A frozen nearest-prototype classifier over 8x8 digits
stands in for the MLLM; ``train`` searches description prompts (pixel sets) on unlabelled images with
AutoSEP's instance-level score and the baselines; ``evaluate`` scores every prompt's test accuracy.
"""
