"""Every file the linear_cmdp stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
INSTANCES = "data/linear_cmdp/instances.json"           # binding CMDP instances with their exact optima
PREPARE_METRICS = "reports/linear_cmdp/prepare.json"
RESULTS = "data/linear_cmdp/results.npz"                # per-episode values of every run (``<agent>/<field>``)
TRAIN_METRICS = "reports/linear_cmdp/train.json"
METRICS = "reports/linear_cmdp/metrics.json"
PLOT_REGRET = "reports/linear_cmdp/regret_vs_K.png"
PLOT_VIOLATIONS = "reports/linear_cmdp/violations.png"
CSV_REGRET = "reports/linear_cmdp/regret_curve.csv"
CSV_VIOLATIONS = "reports/linear_cmdp/violations.csv"
