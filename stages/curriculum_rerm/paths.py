"""Every file the curriculum_rerm stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
RESULTS = "data/curriculum_rerm/results.npz"              # per-seed figures of every arm (train writes, evaluate reads)
TRAIN_METRICS = "reports/curriculum_rerm/train.json"
METRICS = "reports/curriculum_rerm/metrics.json"
PLOT_RIDGE = "reports/curriculum_rerm/ridge_lambda.png"
PLOT_DIGITS = "reports/curriculum_rerm/digits_paired.png"
CSV_RIDGE = "reports/curriculum_rerm/ridge_lambda.csv"
CSV_DIGITS = "reports/curriculum_rerm/digits_paired.csv"
