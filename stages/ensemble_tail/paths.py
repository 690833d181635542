"""Every file the ensemble_tail stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
TAILS = "data/ensemble_tail/tails.json"         # tail-event counts per problem, method and n (train)
TRAIN_REPORT = "reports/ensemble_tail/train.json"
METRICS = "reports/ensemble_tail/metrics.json"
PLOT_TAILS, PLOT_BASE = "reports/ensemble_tail/tails.png", "reports/ensemble_tail/base_fits.png"
CSV_TAILS = "reports/ensemble_tail/tails.csv"
