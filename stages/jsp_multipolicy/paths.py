"""Every file the jsp_multipolicy stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
TEST_SET = "data/jsp_multipolicy/test.npz"
MODELS = "data/jsp_multipolicy/models.pt"
MLFLOW_MODELS = "data/jsp_multipolicy/mlflow"   # one MLflow pyfunc folder per network (pyfunc.py)
PREPARE_METRICS = "reports/jsp_multipolicy/prepare.json"
TRAIN_METRICS = "reports/jsp_multipolicy/train.json"
METRICS = "reports/jsp_multipolicy/metrics.json"
PLOT, PLOT_DATA = "reports/jsp_multipolicy/gaps.png", "reports/jsp_multipolicy/gaps.csv"
