"""Every file the auto_refine stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
KB = "data/auto_refine/kb.json"
POLICIES = "data/auto_refine/policies.pt"
MODEL = "data/auto_refine/model"              # the refine arm's scorer as an MLflow pyfunc model (pyfunc.py)
PREPARE_METRICS = "reports/auto_refine/prepare.json"
TRAIN_METRICS = "reports/auto_refine/train.json"
METRICS = "reports/auto_refine/metrics.json"
PLOT, PLOT_DATA = "reports/auto_refine/em.png", "reports/auto_refine/em.csv"
