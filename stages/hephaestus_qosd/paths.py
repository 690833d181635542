"""Every file the hephaestus_qosd stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
INSTANCES = "data/hephaestus_qosd/instances.json"
MODEL = "data/hephaestus_qosd/model"          # the mixture CVAE as an MLflow pyfunc model (pyfunc.py)
PREPARE_METRICS = "reports/hephaestus_qosd/prepare.json"
TRAIN_METRICS = "reports/hephaestus_qosd/train.json"
METRICS = "reports/hephaestus_qosd/metrics.json"
RESULTS = "reports/hephaestus_qosd/results.csv"               # one row per test instance and method
PLOT, PLOT_DATA = "reports/hephaestus_qosd/cost_vs_optimum.png", "reports/hephaestus_qosd/cost_vs_optimum.csv"
