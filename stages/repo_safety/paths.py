"""Every file the repo_safety stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DATASET = "data/repo_safety/bandit"                 # Hugging Face Dataset: one row per (f, prompt)
INSTANCES = "data/repo_safety/instances.json"       # beta, budget and each instance's lambda* etc.
POLICIES = "data/repo_safety/policies.npz"          # per-prompt expected costs and helpfulness per policy
CURVES = "data/repo_safety/curves.json"             # training curves
PREPARE_METRICS = "reports/repo_safety/prepare.json"
TRAIN_METRICS = "reports/repo_safety/train.json"
METRICS = "reports/repo_safety/metrics.json"
PLOT_SWEEP, CSV_SWEEP = "reports/repo_safety/sweep.png", "reports/repo_safety/sweep.csv"
PLOT_COMP = "reports/repo_safety/compensation.png"
PLOT_CURVES, CSV_CURVES = "reports/repo_safety/curves.png", "reports/repo_safety/curves.csv"
