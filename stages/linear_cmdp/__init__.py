"""linear_cmdp: zero-violation linear CMDP (OPSE-LCMDP) with its baselines; see prepare/train/evaluate."""
