"""Every file the diff_purify stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DIGITS = "data/diff_purify/digits.npz"            # x_train, y_train, x_test, y_test ([0, 1] pixels)
WEIGHTS = "data/diff_purify/weights.pt"           # state dicts of the classifier and score networks + config
MODEL = "data/diff_purify/model"                  # purify-then-classify (AAOpt) as an MLflow pyfunc model (pyfunc.py)
PREPARE_METRICS = "reports/diff_purify/prepare.json"
TRAIN_METRICS = "reports/diff_purify/train.json"
METRICS = "reports/diff_purify/metrics.json"
RESULTS = "reports/diff_purify/results.csv"       # accuracy per defence, attack and radius, with intervals
PLOT, PLOT_DATA = "reports/diff_purify/robust_accuracy.png", "reports/diff_purify/robust_accuracy.csv"
GRID = "reports/diff_purify/grid.png"             # clean / adversarial / prior-purified / AAOpt-purified
